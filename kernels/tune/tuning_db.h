// The auto-tuner's persistent results: one tuning database per device, read by the runtime to
// choose what to launch (plan.h) and written by hal-tune (tuner.h).
//
// A database belongs to one DeviceKey: the backend and device it was measured on, the driver
// build, hal's version and the kernel pack. A measurement is only evidence for the exact
// combination it was taken on, so a file written for any other key is "stale" and never
// trusted; neither is a file that does not parse or fails its checksum. Both are reported as a
// one-sentence warning and read as an empty database, never as an error: a tuning database is
// a cache, and the runtime always has the family's default to fall back on.
//
// File format (version 1): line-oriented text so that a person can read it; every line ends
// with '\n' and fields are separated by exactly one space:
//
//   hal-tune-db 1
//   backend <backend>
//   device <device_uuid>
//   driver <driver: the rest of the line>
//   hal <hal_version>
//   pack <pack_hash>
//   entry <family> <bucket> <kernel> <specializations> <block> <time_ms> <default_time_ms> <label>
//   ...
//   checksum <FNV-1a 64 of every byte before this line, 16 lowercase hex digits>
//
// <specializations> is "-" when empty, else "id=value" pairs joined by ',' ("0=64,1=128,2=16").
// <block> is "x,y,z". Times are written as the shortest decimal text that reads back as the
// same double. <label> is the rest of the line. The header lines come in exactly this order and
// once each; entries are sorted by family then bucket, with at most one per (family, bucket);
// nothing may follow the checksum line. A reader rejects the whole file on any deviation.
//
// Concurrency: Database::save serialises writers of one path with an exclusive flock on
// "<path>.lock" (the lock file is left in place: removing it would let two writers lock
// different files), merges with what is on disk under that lock and replaces the file by an
// atomic rename, so readers never see a partial file and no writer's entries are lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hal_kernels::tune {

// What a database is valid for. Every field must match for an entry to be trusted.
struct DeviceKey {
  std::string backend;      // "vulkan", "cuda", ... ([a-z0-9_]+)
  std::string device_uuid;  // 32 lowercase hex digits
  // Free text identifying the driver build, e.g. "Mesa 22.3.6 api 4206830": may contain spaces,
  // never a newline or carriage return.
  std::string driver;
  std::string hal_version;  // "0.4.0" ([A-Za-z0-9._+-]+)
  std::string pack_hash;    // 16 lowercase hex digits: a hash of the kernel pack's blobs
};

// A 32-bit specialization constant: constant |id| of the module is set to |value|.
struct Specialization {
  uint32_t id = 0;
  uint32_t value = 0;
};

// One tuned choice: what to launch for a family at a shape bucket.
struct Entry {
  std::string family;  // e.g. "matmul_f32" ([A-Za-z0-9_]+)
  std::string bucket;  // e.g. "1024x1024x1024" (see shape_bucket): decimal numbers joined by 'x'
  std::string kernel;  // the pack kernel whose blob is loaded ([A-Za-z0-9_]+)
  std::vector<Specialization> specializations;  // in the order they are applied; may be empty
  uint32_t block[3] = {0, 0, 0};                // every dimension at least 1
  double time_ms = 0;          // median measured time of this choice (finite, >= 0)
  double default_time_ms = 0;  // median measured time of the family's default in the same run
  std::string label;           // human-readable parameters, e.g. "BM=64 BN=128 BK=16" (no newline)
};

// The bucket of a problem shape: each dimension rounded up to a power of two, joined by 'x'
// ({1000, 1024, 33} -> "1024x1024x64"), so that one tuning run serves every shape close to it.
// A dimension of 0 stays 0. An empty shape gives "".
// Thread-safety: pure; safe from any thread.
std::string shape_bucket(const std::vector<uint32_t>& shape);

// The directory the database files live in: "$HAL_CACHE_DIR/tune" when HAL_CACHE_DIR is set and
// not empty, else "$XDG_CACHE_HOME/hal/tune" when XDG_CACHE_HOME is an absolute path (the XDG
// base directory specification says a relative one must be ignored), else
// "$HOME/.cache/hal/tune" when HOME is set and not empty; "" when none applies. Trailing '/'s
// of the variable are dropped. Nothing is created or checked on disk.
// Thread-safety: reads the environment, so it must not race with setenv/unsetenv.
std::string default_directory();

// The file for |key| in |directory|: "<directory>/<backend>-<device_uuid>.tune" (no '/' is
// added when |directory| already ends with one; just the file name when it is empty). The
// key's fields are not validated here: save refuses keys that cannot be written.
// Thread-safety: pure; safe from any thread.
std::string path_for(const std::string& directory, const DeviceKey& key);

// An in-memory tuning database: a key and the entries measured under it, at most one per
// (family, bucket).
//
// Thread-safety: like a standard container. Const members (find, entries, save, ...) may run
// concurrently with each other; put must not run concurrently with any other use of the same
// object. Different objects are independent, including when they save to the same path.
class Database {
 public:
  // An empty database with an empty key: a placeholder to assign a loaded one to.
  Database() = default;
  // An empty database for |key|.
  explicit Database(DeviceKey key);

  // The key this database was created or loaded for.
  const DeviceKey& key() const { return key_; }

  // Reads the database at |path| for |key|. Always returns a database whose key is |key|:
  //  - a missing file (or a missing directory) gives an empty database and no warning;
  //  - a file that cannot be read, is not a tuning database, does not parse, fails its
  //    checksum, has another format version or was written for another key (a different
  //    backend, device, driver, hal version or kernel pack: "stale") gives an empty database
  //    and sets *warning to one sentence naming the file and the reason, e.g. "ignoring tuning
  //    database /x/y.tune: it is stale: it was written by hal 0.3.0 (this is 0.4.0); re-run
  //    hal-tune".
  // A file is used entirely or not at all: no entry of a file with any defect is returned.
  // *warning is cleared when there is nothing to warn about; |warning| may be null.
  // Never throws for bad content (only std::bad_alloc, like any allocation). Takes no lock: a
  // concurrent save replaces the file atomically, so a reader sees the old or the new file.
  // Thread-safety: safe from any thread.
  static Database load(const std::string& path, const DeviceKey& key, std::string* warning);

  // The entry for (|family|, |bucket|), or nullptr when there is none. The entry is owned by
  // this database; the pointer is valid until the next put or assignment to this database.
  const Entry* find(const std::string& family, const std::string& bucket) const;

  // Adds a copy of |entry|, replacing the entry with the same (family, bucket) if there is one.
  // Nothing is validated here: save refuses an entry that cannot be written.
  void put(const Entry& entry);

  // Every entry, in the order they were loaded or first put.
  const std::vector<Entry>& entries() const { return entries_; }

  // Writes this database to |path| so that concurrent writers (threads or processes saving to
  // the same path) and readers are safe:
  //  1. refuses (false) a key or entry the file format cannot represent faithfully (a bad
  //     identifier or number, or a newline in the driver or a label), so save never writes a
  //     file that load would reject;
  //  2. creates |path|'s missing parent directories;
  //  3. takes an exclusive flock on "<path>.lock" (created if needed, left in place), waiting
  //     as long as another writer holds it;
  //  4. re-reads |path| under the lock and merges: this database's entries replace those with
  //     the same (family, bucket) and the file's other entries are kept; a missing, corrupt or
  //     stale file contributes nothing and is replaced, but a file that exists and cannot be
  //     read fails the save (replacing it could drop entries other writers stored);
  //  5. writes "<path>.tmp" (only ever used under the lock, so one name suffices and a crashed
  //     writer's leftover is simply overwritten), fsyncs it, renames it over |path| and fsyncs
  //     the directory (best effort: the rename is already atomic, this only makes it durable).
  // This database itself is not changed: load again to see entries other writers added.
  // Returns true on success, clearing *error. On failure returns false with *error set to one
  // sentence naming |path| and why: what cannot be written, or the failed step and its
  // strerror text; |path| is then unchanged and no temporary file is left behind. |error| may
  // be null.
  // Thread-safety: safe from any thread, concurrently with other saves and loads.
  bool save(const std::string& path, std::string* error) const;

 private:
  DeviceKey key_;
  std::vector<Entry> entries_;
};

// Text for `hal-tune --show`: the key, one field per line, then a table with a header line and
// one line per entry (family, bucket, kernel, label, time_ms, default_ms, speedup =
// default_time_ms / time_ms, "-" when time_ms is 0), sorted by family then bucket, columns
// padded to their widest cell; "(no entries)" instead of the table when there are none. Every
// line ends with '\n'.
// Thread-safety: safe from any thread while |db| is not being modified.
std::string format_table(const Database& db);

}  // namespace hal_kernels::tune
