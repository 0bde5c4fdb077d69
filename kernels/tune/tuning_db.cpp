#include "tuning_db.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

namespace hal_kernels::tune {
namespace {

constexpr std::string_view kMagic = "hal-tune-db";
constexpr uint32_t kFormatVersion = 1;
// A real database holds a few entries per family; anything this large is not one, and reading
// it whole would only waste memory.
constexpr off_t kMaxFileBytes = 16 << 20;
constexpr std::string_view kRerun = "; re-run hal-tune";

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex16(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i) {
    text[static_cast<size_t>(i)] = kDigits[value & 0xf];
    value >>= 4;
  }
  return text;
}

// strerror_r comes in two flavours (XSI returns int, GNU returns the message); overloads on the
// return type pick the right reading without preprocessor tests. strerror itself is not
// thread-safe, and save runs on many threads.
[[maybe_unused]] std::string strerror_text(int result, const char* buffer, int error_number) {
  return result == 0 ? std::string(buffer) : "error " + std::to_string(error_number);
}
[[maybe_unused]] std::string strerror_text(const char* result, const char*, int) {
  return std::string(result);
}
std::string describe_errno(int error_number) {
  char buffer[256] = {};
  return strerror_text(strerror_r(error_number, buffer, sizeof(buffer)), buffer, error_number);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}

// [a-z0-9_]+: a backend name, as the driver loader accepts them.
bool is_backend_name(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return is_lower(c) || is_digit(c) || c == '_';
  });
}

// [A-Za-z0-9_]+: a family or kernel name (a C identifier's characters).
bool is_identifier(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return is_lower(c) || is_upper(c) || is_digit(c) || c == '_';
  });
}

bool is_lower_hex(std::string_view text, size_t digits) {
  return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
           return is_digit(c) || (c >= 'a' && c <= 'f');
         });
}

// [A-Za-z0-9._+-]+: a version such as "0.4.0" or "0.5.0-rc1+abc".
bool is_version(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return is_lower(c) || is_upper(c) || is_digit(c) || c == '.' || c == '_' || c == '+' ||
           c == '-';
  });
}

// Decimal numbers joined by 'x' ("1024x1024x64"), as shape_bucket writes them.
bool is_bucket(std::string_view text) {
  if (text.empty() || text.front() == 'x' || text.back() == 'x') return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == 'x') {
      if (text[i + 1] == 'x') return false;
    } else if (!is_digit(text[i])) {
      return false;
    }
  }
  return true;
}

// Free text must stay on its line: the format is line-oriented and a '\r' would be eaten by
// tools that treat "\r\n" as a line end.
bool is_single_line(std::string_view text) {
  return text.find_first_of("\r\n") == std::string_view::npos;
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

// Why |key| cannot be stored faithfully, or "" when it can. Shared by save and the parser so
// that save never writes what load would reject.
std::string key_defect(const DeviceKey& key) {
  if (!is_backend_name(key.backend)) {
    return "the backend " + quoted(key.backend) + " is not [a-z0-9_]+";
  }
  if (!is_lower_hex(key.device_uuid, 32)) {
    return "the device uuid " + quoted(key.device_uuid) + " is not 32 lowercase hex digits";
  }
  if (!is_single_line(key.driver)) return "the driver text contains a newline";
  if (!is_version(key.hal_version)) {
    return "the hal version " + quoted(key.hal_version) + " is not [A-Za-z0-9._+-]+";
  }
  if (!is_lower_hex(key.pack_hash, 16)) {
    return "the pack hash " + quoted(key.pack_hash) + " is not 16 lowercase hex digits";
  }
  return "";
}

bool is_valid_time(double ms) {
  return std::isfinite(ms) && ms >= 0;
}

// Why |entry| cannot be stored faithfully, or "" when it can (see key_defect).
std::string entry_defect(const Entry& entry) {
  if (!is_identifier(entry.family)) {
    return "the family " + quoted(entry.family) + " is not [A-Za-z0-9_]+";
  }
  if (!is_bucket(entry.bucket)) {
    return "the bucket " + quoted(entry.bucket) + " of " + entry.family +
           " is not numbers joined by 'x'";
  }
  const std::string where = " of " + entry.family + " " + entry.bucket;
  if (!is_identifier(entry.kernel)) {
    return "the kernel " + quoted(entry.kernel) + where + " is not [A-Za-z0-9_]+";
  }
  if (entry.block[0] == 0 || entry.block[1] == 0 || entry.block[2] == 0) {
    return "the block" + where + " has a dimension of 0";
  }
  if (!is_valid_time(entry.time_ms) || !is_valid_time(entry.default_time_ms)) {
    return "a time" + where + " is negative or not finite";
  }
  if (!is_single_line(entry.label)) return "the label" + where + " contains a newline";
  return "";
}

bool entry_less(const Entry& a, const Entry& b) {
  return std::tie(a.family, a.bucket) < std::tie(b.family, b.bucket);
}

// The shortest text that reads back as the same double (std::to_chars is locale-independent,
// unlike printf, so a file written under one locale reads under any other).
std::string format_double(double value) {
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

bool parse_double(std::string_view text, double* value) {
  if (text.empty()) return false;
  const std::from_chars_result result =
      std::from_chars(text.data(), text.data() + text.size(), *value, std::chars_format::general);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

// Plain decimal digits only: no sign, no spaces, no overflow.
bool parse_u32(std::string_view text, uint32_t* value) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit)) return false;
  const std::from_chars_result result =
      std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string format_specializations(const std::vector<Specialization>& specializations) {
  if (specializations.empty()) return "-";
  std::string text;
  for (const Specialization& s : specializations) {
    if (!text.empty()) text += ',';
    text += std::to_string(s.id) + "=" + std::to_string(s.value);
  }
  return text;
}

bool parse_specializations(std::string_view text, std::vector<Specialization>* specializations) {
  specializations->clear();
  if (text == "-") return true;
  for (std::string_view pair : split(text, ',')) {
    const size_t equals = pair.find('=');
    Specialization s;
    if (equals == std::string_view::npos || !parse_u32(pair.substr(0, equals), &s.id) ||
        !parse_u32(pair.substr(equals + 1), &s.value)) {
      return false;
    }
    specializations->push_back(s);
  }
  return true;
}

bool parse_block(std::string_view text, uint32_t block[3]) {
  const std::vector<std::string_view> parts = split(text, ',');
  if (parts.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (!parse_u32(parts[i], &block[i])) return false;
  }
  return true;
}

// |entries| must be valid and sorted (see save).
std::string serialize(const DeviceKey& key, const std::vector<Entry>& entries) {
  std::string text;
  text += std::string(kMagic) + " " + std::to_string(kFormatVersion) + "\n";
  text += "backend " + key.backend + "\n";
  text += "device " + key.device_uuid + "\n";
  // An empty driver is written as a bare keyword: editors that strip trailing spaces would
  // otherwise change the file (which the checksum would then reject).
  text += "driver" + (key.driver.empty() ? "" : " " + key.driver) + "\n";
  text += "hal " + key.hal_version + "\n";
  text += "pack " + key.pack_hash + "\n";
  for (const Entry& e : entries) {
    text += "entry " + e.family + " " + e.bucket + " " + e.kernel + " " +
            format_specializations(e.specializations) + " " + std::to_string(e.block[0]) + "," +
            std::to_string(e.block[1]) + "," + std::to_string(e.block[2]) + " " +
            format_double(e.time_ms) + " " + format_double(e.default_time_ms);
    if (!e.label.empty()) text += " " + e.label;
    text += "\n";
  }
  text += "checksum " + hex16(fnv1a64(text)) + "\n";
  return text;
}

// Splits |line| into |count| fields separated by single spaces, then the rest of the line
// (after one more space; "" when the line ends after the last field). False when a field is
// missing or empty.
bool split_fields(std::string_view line, size_t count, std::vector<std::string_view>* fields,
                  std::string_view* rest) {
  fields->clear();
  size_t start = 0;
  for (size_t i = 0; i < count; ++i) {
    if (start > line.size()) return false;
    const size_t end = std::min(line.find(' ', start), line.size());
    if (end == start) return false;
    fields->push_back(line.substr(start, end - start));
    start = end + 1;
  }
  *rest = start > line.size() ? std::string_view() : line.substr(start);
  return true;
}

// A header line "<keyword> <value>"; a bare "<keyword>" is an empty value.
bool header_value(std::string_view line, std::string_view keyword, std::string* value) {
  if (line == keyword) {
    value->clear();
    return true;
  }
  if (line.size() <= keyword.size() || !starts_with(line, keyword) || line[keyword.size()] != ' ')
    return false;
  *value = std::string(line.substr(keyword.size() + 1));
  return true;
}

// Parses a whole file. Returns "" and fills |key| and |entries| when every byte of |text| is
// valid; otherwise the reason, as a clause for "ignoring tuning database P: <reason>".
std::string parse(std::string_view text, DeviceKey* key, std::vector<Entry>* entries) {
  entries->clear();
  if (text.empty()) return "it is empty";
  // The version comes first: a later format may be checksummed differently, and "written by a
  // newer hal" is a more useful reason than "checksum mismatch".
  const std::string_view first_line = text.substr(0, text.find('\n'));
  if (!starts_with(first_line, std::string(kMagic) + " ")) {
    return "it is not a tuning database (it does not start with " +
           quoted(std::string(kMagic) + " " + std::to_string(kFormatVersion)) + ")";
  }
  uint32_t version = 0;
  if (!parse_u32(first_line.substr(kMagic.size() + 1), &version)) {
    return "its format version " + quoted(first_line.substr(kMagic.size() + 1)) +
           " is not a number";
  }
  if (version != kFormatVersion) {
    return "it has format version " + std::to_string(version) + ", this hal reads version " +
           std::to_string(kFormatVersion);
  }
  if (text.back() != '\n') return "it does not end with a complete line (it was truncated)";

  const std::string_view without_last_newline = text.substr(0, text.size() - 1);
  const size_t last_line_start = without_last_newline.rfind('\n') + 1;  // npos + 1 == 0
  const std::string_view last_line = without_last_newline.substr(last_line_start);
  if (last_line_start == 0 || !starts_with(last_line, "checksum ")) {
    return "it does not end with a checksum line (it was truncated, or text was added after "
           "it)";
  }
  const std::string_view stored = last_line.substr(std::string_view("checksum ").size());
  if (!is_lower_hex(stored, 16)) {
    return "its checksum " + quoted(stored) + " is not 16 lowercase hex digits";
  }
  const std::string_view body = text.substr(0, last_line_start);
  if (hex16(fnv1a64(body)) != stored) {
    return "its checksum does not match its contents (the file is corrupt)";
  }

  std::vector<std::string_view> lines = split(body.substr(0, body.size() - 1), '\n');
  static constexpr std::string_view kHeaderKeywords[] = {"backend", "device", "driver", "hal",
                                                         "pack"};
  std::string* const header_values[] = {&key->backend, &key->device_uuid, &key->driver,
                                        &key->hal_version, &key->pack_hash};
  constexpr size_t kHeaderLines = std::size(kHeaderKeywords);
  auto at_line = [](size_t index) { return "line " + std::to_string(index + 1) + ": "; };
  for (size_t i = 0; i < kHeaderLines; ++i) {
    const size_t index = i + 1;  // after the version line
    if (index >= lines.size() ||
        !header_value(lines[index], kHeaderKeywords[i], header_values[i])) {
      return at_line(index) + "expected the " + quoted(kHeaderKeywords[i]) + " line";
    }
  }
  const std::string bad_key = key_defect(*key);
  if (!bad_key.empty()) return "its header is invalid: " + bad_key;

  std::vector<std::string_view> fields;
  for (size_t index = kHeaderLines + 1; index < lines.size(); ++index) {
    const std::string_view line = lines[index];
    std::string_view label;
    if (!starts_with(line, "entry ") ||
        !split_fields(line.substr(std::string_view("entry ").size()), 7, &fields, &label)) {
      return at_line(index) + "expected an entry line with 7 fields and a label";
    }
    Entry entry;
    entry.family = std::string(fields[0]);
    entry.bucket = std::string(fields[1]);
    entry.kernel = std::string(fields[2]);
    if (!parse_specializations(fields[3], &entry.specializations)) {
      return at_line(index) + "the specializations " + quoted(fields[3]) +
             " are not \"-\" or id=value pairs joined by ','";
    }
    if (!parse_block(fields[4], entry.block)) {
      return at_line(index) + "the block " + quoted(fields[4]) + " is not three numbers";
    }
    if (!parse_double(fields[5], &entry.time_ms) ||
        !parse_double(fields[6], &entry.default_time_ms)) {
      return at_line(index) + "the times " + quoted(fields[5]) + " and " + quoted(fields[6]) +
             " are not both numbers";
    }
    entry.label = std::string(label);
    const std::string bad_entry = entry_defect(entry);
    if (!bad_entry.empty()) return at_line(index) + bad_entry;
    // Sorted and unique, as save writes them: a repeated (family, bucket) would make the
    // lookup's answer depend on which copy comes first.
    if (!entries->empty() && !entry_less(entries->back(), entry)) {
      return at_line(index) + "the entry for " + entry.family + " " + entry.bucket +
             " is repeated or out of order";
    }
    entries->push_back(std::move(entry));
  }
  return "";
}

// What differs between the key a file was written for and the one it is read for, as a
// clause; "" when they are the same.
std::string stale_reason(const DeviceKey& file, const DeviceKey& wanted) {
  std::vector<std::string> differences;
  if (file.backend != wanted.backend) {
    differences.push_back("for backend " + file.backend + " (this is " + wanted.backend + ")");
  }
  if (file.device_uuid != wanted.device_uuid) {
    differences.push_back("for device " + file.device_uuid + " (this is " + wanted.device_uuid +
                          ")");
  }
  if (file.driver != wanted.driver) {
    differences.push_back("for driver " + quoted(file.driver) + " (this is " +
                          quoted(wanted.driver) + ")");
  }
  if (file.hal_version != wanted.hal_version) {
    differences.push_back("by hal " + file.hal_version + " (this is " + wanted.hal_version + ")");
  }
  if (file.pack_hash != wanted.pack_hash) {
    differences.push_back("for kernel pack " + file.pack_hash + " (this is " + wanted.pack_hash +
                          ")");
  }
  if (differences.empty()) return "";
  std::string text = "it is stale: it was written ";
  for (size_t i = 0; i < differences.size(); ++i) {
    if (i > 0) text += i + 1 == differences.size() ? " and " : ", ";
    text += differences[i];
  }
  return text;
}

// Closes a file descriptor when it goes out of scope (which also releases a flock on it).
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and returns close's result (0 or -1 with errno), so a write error the kernel
  // only reports at close is not lost.
  int close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

enum class ReadOutcome { kRead, kMissing, kTooLarge, kFailed };

// Reads the whole of |path| into |contents|; *error_number is set for kFailed.
ReadOutcome read_file(const std::string& path, std::string* contents, int* error_number) {
  contents->clear();
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    *error_number = errno;
    return errno == ENOENT ? ReadOutcome::kMissing : ReadOutcome::kFailed;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    *error_number = errno;
    return ReadOutcome::kFailed;
  }
  if (S_ISDIR(info.st_mode)) {
    *error_number = EISDIR;
    return ReadOutcome::kFailed;
  }
  if (info.st_size > kMaxFileBytes) return ReadOutcome::kTooLarge;
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *error_number = errno;
      return ReadOutcome::kFailed;
    }
    if (got == 0) return ReadOutcome::kRead;
    contents->append(buffer, static_cast<size_t>(got));
    // The size was checked before reading, but the file may have grown since.
    if (contents->size() > static_cast<size_t>(kMaxFileBytes)) return ReadOutcome::kTooLarge;
  }
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p: creates every missing directory of |directory|. Returns "" or the failure as a
// clause.
std::string make_directories(const std::string& directory) {
  if (directory.empty()) return "";
  for (size_t slash = directory.find('/', 1);; slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    // EEXIST covers both a directory and a file in the way; the latter is reported by the
    // next step that uses it, with its own errno (ENOTDIR).
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      return "cannot create the directory " + prefix + ": " + describe_errno(errno);
    }
    if (slash == std::string::npos) return "";
  }
}

}  // namespace

std::string shape_bucket(const std::vector<uint32_t>& shape) {
  std::string bucket;
  for (const uint32_t dimension : shape) {
    // 64-bit: rounding a dimension above 2^31 up gives 2^32, which a uint32_t cannot hold.
    uint64_t rounded = dimension == 0 ? 0 : 1;
    while (rounded < dimension) rounded <<= 1;
    if (!bucket.empty()) bucket += 'x';
    bucket += std::to_string(rounded);
  }
  return bucket;
}

std::string default_directory() {
  auto variable = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    std::string text = value == nullptr ? "" : value;
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
  };
  const std::string hal_cache = variable("HAL_CACHE_DIR");
  if (!hal_cache.empty()) return hal_cache + "/tune";
  const std::string xdg_cache = variable("XDG_CACHE_HOME");
  if (!xdg_cache.empty() && xdg_cache.front() == '/') return xdg_cache + "/hal/tune";
  const std::string home = variable("HOME");
  if (!home.empty()) return home + "/.cache/hal/tune";
  return "";
}

std::string path_for(const std::string& directory, const DeviceKey& key) {
  const std::string file = key.backend + "-" + key.device_uuid + ".tune";
  if (directory.empty()) return file;
  return directory.back() == '/' ? directory + file : directory + "/" + file;
}

Database::Database(DeviceKey key) : key_(std::move(key)) {}

Database Database::load(const std::string& path, const DeviceKey& key, std::string* warning) {
  Database db(key);
  std::string reason;
  std::string contents;
  int error_number = 0;
  switch (read_file(path, &contents, &error_number)) {
    case ReadOutcome::kMissing:
      break;
    case ReadOutcome::kFailed:
      reason = "it cannot be read: " + describe_errno(error_number);
      break;
    case ReadOutcome::kTooLarge:
      reason = "it is larger than any tuning database (over " +
               std::to_string(kMaxFileBytes >> 20) + " MiB)" + std::string(kRerun);
      break;
    case ReadOutcome::kRead: {
      DeviceKey file_key;
      std::vector<Entry> entries;
      reason = parse(contents, &file_key, &entries);
      if (reason.empty()) reason = stale_reason(file_key, key);
      if (reason.empty()) {
        db.entries_ = std::move(entries);
      } else {
        reason += kRerun;
      }
      break;
    }
  }
  if (warning != nullptr) {
    *warning = reason.empty() ? "" : "ignoring tuning database " + path + ": " + reason;
  }
  return db;
}

const Entry* Database::find(const std::string& family, const std::string& bucket) const {
  for (const Entry& entry : entries_) {
    if (entry.family == family && entry.bucket == bucket) return &entry;
  }
  return nullptr;
}

void Database::put(const Entry& entry) {
  for (Entry& existing : entries_) {
    if (existing.family == entry.family && existing.bucket == entry.bucket) {
      existing = entry;
      return;
    }
  }
  entries_.push_back(entry);
}

bool Database::save(const std::string& path, std::string* error) const {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = "cannot save tuning database " + path + ": " + why;
    return false;
  };
  if (path.empty()) return fail("no path was given");
  std::string defect = key_defect(key_);
  for (size_t i = 0; defect.empty() && i < entries_.size(); ++i) {
    defect = entry_defect(entries_[i]);
  }
  if (!defect.empty()) return fail(defect);

  const std::string directory = parent_directory(path);
  const std::string made = make_directories(directory);
  if (!made.empty()) return fail(made);

  const std::string lock_path = path + ".lock";
  FileDescriptor lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (lock.get() < 0) {
    return fail("cannot open the lock file " + lock_path + ": " + describe_errno(errno));
  }
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) {
      return fail("cannot lock " + lock_path + ": " + describe_errno(errno));
    }
  }

  // Under the lock nobody else writes |path|: what is read now is what this save replaces.
  std::vector<Entry> merged;
  std::string contents;
  int error_number = 0;
  const ReadOutcome outcome = read_file(path, &contents, &error_number);
  if (outcome == ReadOutcome::kFailed) {
    // Replacing a file that could not be read could discard other writers' entries.
    return fail("cannot read the existing file: " + describe_errno(error_number));
  }
  if (outcome == ReadOutcome::kRead) {
    DeviceKey file_key;
    std::vector<Entry> on_disk;
    if (parse(contents, &file_key, &on_disk).empty() && stale_reason(file_key, key_).empty()) {
      merged = std::move(on_disk);
    }
  }
  for (const Entry& entry : entries_) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const Entry& existing) {
      return existing.family == entry.family && existing.bucket == entry.bucket;
    });
    if (same != merged.end()) {
      *same = entry;
    } else {
      merged.push_back(entry);
    }
  }
  std::sort(merged.begin(), merged.end(), entry_less);
  const std::string text = serialize(key_, merged);

  const std::string temporary_path = path + ".tmp";
  FileDescriptor temporary(
      ::open(temporary_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (temporary.get() < 0) {
    return fail("cannot create " + temporary_path + ": " + describe_errno(errno));
  }
  // |what| names the step that failed; errno still holds its error.
  auto fail_and_remove_temporary = [&](const std::string& what) {
    const std::string why = what + ": " + describe_errno(errno);
    if (temporary.get() >= 0) temporary.close();
    ::unlink(temporary_path.c_str());
    return fail(why);
  };
  if (!write_all(temporary.get(), text))
    return fail_and_remove_temporary("cannot write " + temporary_path);
  if (::fsync(temporary.get()) != 0)
    return fail_and_remove_temporary("cannot fsync " + temporary_path);
  if (temporary.close() != 0) return fail_and_remove_temporary("cannot close " + temporary_path);
  if (::rename(temporary_path.c_str(), path.c_str()) != 0) {
    return fail_and_remove_temporary("cannot rename " + temporary_path + " over it");
  }
  // Best effort: the rename is already atomic for readers; this only makes it survive a power
  // loss, and some file systems cannot fsync a directory.
  FileDescriptor directory_fd(
      ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory_fd.get() >= 0) ::fsync(directory_fd.get());
  if (error != nullptr) error->clear();
  return true;
}

std::string format_table(const Database& db) {
  const DeviceKey& key = db.key();
  std::string text;
  text += "backend  " + key.backend + "\n";
  text += "device   " + key.device_uuid + "\n";
  text += "driver   " + key.driver + "\n";
  text += "hal      " + key.hal_version + "\n";
  text += "pack     " + key.pack_hash + "\n";
  if (db.entries().empty()) return text + "(no entries)\n";

  std::vector<const Entry*> sorted;
  for (const Entry& entry : db.entries()) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry* a, const Entry* b) { return entry_less(*a, *b); });
  auto fixed = [](const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), format, value);
    return std::string(buffer);
  };
  std::vector<std::vector<std::string>> rows = {
      {"family", "bucket", "kernel", "label", "time_ms", "default_ms", "speedup"}};
  for (const Entry* e : sorted) {
    rows.push_back({e->family, e->bucket, e->kernel, e->label, fixed("%.3f", e->time_ms),
                    fixed("%.3f", e->default_time_ms),
                    e->time_ms > 0 ? fixed("%.2fx", e->default_time_ms / e->time_ms) : "-"});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  text += "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    text += line + "\n";
  }
  return text;
}

}  // namespace hal_kernels::tune
