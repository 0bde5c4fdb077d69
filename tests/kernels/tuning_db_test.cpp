// The tuning database (kernels/tune/tuning_db.h): buckets, the file format's round trip, the
// rejection of every kind of corrupt or stale file, and saves racing from threads and processes.
#include "tuning_db.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hal_kernels::tune {
namespace {

namespace fs = std::filesystem;

DeviceKey test_key() {
  DeviceKey key;
  key.backend = "vulkan";
  key.device_uuid = "0123456789abcdef0123456789abcdef";
  key.driver = "Mesa 22.3.6 api 4206830";
  key.hal_version = "0.4.0";
  key.pack_hash = "89abcdef01234567";
  return key;
}

Entry test_entry(const std::string& family, const std::string& bucket, double time_ms = 1.5) {
  Entry entry;
  entry.family = family;
  entry.bucket = bucket;
  entry.kernel = "matmul_tiled";
  entry.specializations = {{0, 64}, {1, 128}, {2, 16}};
  entry.block[0] = 16;
  entry.block[1] = 16;
  entry.block[2] = 1;
  entry.time_ms = time_ms;
  entry.default_time_ms = 3.0;
  entry.label = "BM=64 BN=128 BK=16";
  return entry;
}

void expect_same_entry(const Entry& expected, const Entry& actual) {
  EXPECT_EQ(expected.family, actual.family);
  EXPECT_EQ(expected.bucket, actual.bucket);
  EXPECT_EQ(expected.kernel, actual.kernel);
  ASSERT_EQ(expected.specializations.size(), actual.specializations.size());
  for (size_t i = 0; i < expected.specializations.size(); ++i) {
    EXPECT_EQ(expected.specializations[i].id, actual.specializations[i].id);
    EXPECT_EQ(expected.specializations[i].value, actual.specializations[i].value);
  }
  for (int d = 0; d < 3; ++d) EXPECT_EQ(expected.block[d], actual.block[d]);
  // Exact: the format promises times that read back as the same double.
  EXPECT_EQ(expected.time_ms, actual.time_ms);
  EXPECT_EQ(expected.default_time_ms, actual.default_time_ms);
  EXPECT_EQ(expected.label, actual.label);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The format's checksum, computed independently so tests can craft files that pass it.
std::string checksum_line(const std::string& body) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : body) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "checksum %016llx\n", static_cast<unsigned long long>(hash));
  return text;
}

const char kValidHeader[] =
    "hal-tune-db 1\n"
    "backend vulkan\n"
    "device 0123456789abcdef0123456789abcdef\n"
    "driver Mesa 22.3.6 api 4206830\n"
    "hal 0.4.0\n"
    "pack 89abcdef01234567\n";

// Restores an environment variable when the test ends, so tests do not leak into each other.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* value = std::getenv(name)) saved_ = value;
  }
  ~ScopedEnv() {
    if (saved_) {
      setenv(name_, saved_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  void set(const char* value) { setenv(name_, value, 1); }
  void unset() { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

class TuningDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tuning_db_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    path_ = path_for(directory_, test_key());
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  // Expects |path_| to load as an empty database for |key| with one warning that names the
  // file and contains |reason|.
  void expect_rejected(const std::string& reason, const DeviceKey& key = test_key()) {
    std::string warning;
    const Database db = Database::load(path_, key, &warning);
    EXPECT_TRUE(db.entries().empty());
    EXPECT_EQ(db.key().device_uuid, key.device_uuid);
    EXPECT_EQ(warning.rfind("ignoring tuning database " + path_ + ": ", 0), 0u) << warning;
    EXPECT_NE(warning.find(reason), std::string::npos) << warning;
    EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  }

  // A valid file at |path_| with two entries, as save writes it.
  std::string save_valid_file() {
    Database db(test_key());
    db.put(test_entry("matmul_tiled_f32", "1024x1024x1024"));
    db.put(test_entry("matmul_tiled_f16", "512x512x512"));
    std::string error;
    EXPECT_TRUE(db.save(path_, &error)) << error;
    return read_text(path_);
  }

  std::set<std::string> directory_listing() const {
    std::set<std::string> names;
    for (const auto& item : fs::directory_iterator(directory_)) {
      names.insert(item.path().filename().string());
    }
    return names;
  }

  std::string directory_;
  std::string path_;
};

TEST(TuningDbShapeBucket, RoundsEveryDimensionUpToAPowerOfTwo) {
  EXPECT_EQ(shape_bucket({1000, 1024, 33}), "1024x1024x64");
  EXPECT_EQ(shape_bucket({1}), "1");
  EXPECT_EQ(shape_bucket({2, 3, 4}), "2x4x4");
  EXPECT_EQ(shape_bucket({0, 5}), "0x8");
  EXPECT_EQ(shape_bucket({4097}), "8192");
  EXPECT_EQ(shape_bucket({0x80000001u}), "4294967296");
  EXPECT_EQ(shape_bucket({0xffffffffu}), "4294967296");
  EXPECT_EQ(shape_bucket({}), "");
}

TEST(TuningDbPathFor, JoinsDirectoryBackendAndDevice) {
  const DeviceKey key = test_key();
  EXPECT_EQ(path_for("/cache/tune", key),
            "/cache/tune/vulkan-0123456789abcdef0123456789abcdef.tune");
  EXPECT_EQ(path_for("/cache/tune/", key),
            "/cache/tune/vulkan-0123456789abcdef0123456789abcdef.tune");
}

TEST(TuningDbDefaultDirectory, PrefersHalCacheDirThenXdgCacheHomeThenHome) {
  ScopedEnv hal_cache("HAL_CACHE_DIR"), xdg_cache("XDG_CACHE_HOME"), home("HOME");
  hal_cache.set("/hal-cache");
  xdg_cache.set("/xdg-cache");
  home.set("/home/someone");
  EXPECT_EQ(default_directory(), "/hal-cache/tune");
  hal_cache.set("/hal-cache/");
  EXPECT_EQ(default_directory(), "/hal-cache/tune");
  hal_cache.set("");  // set but empty counts as unset
  EXPECT_EQ(default_directory(), "/xdg-cache/hal/tune");
  hal_cache.unset();
  EXPECT_EQ(default_directory(), "/xdg-cache/hal/tune");
  xdg_cache.set("relative/cache");  // the XDG specification says to ignore relative paths
  EXPECT_EQ(default_directory(), "/home/someone/.cache/hal/tune");
  xdg_cache.unset();
  EXPECT_EQ(default_directory(), "/home/someone/.cache/hal/tune");
  home.unset();
  EXPECT_EQ(default_directory(), "");
}

TEST(TuningDbPut, PutReplacesTheEntryWithTheSameFamilyAndBucket) {
  Database db(test_key());
  db.put(test_entry("matmul_tiled_f32", "64x64x64", 2.0));
  db.put(test_entry("matmul_tiled_f32", "128x128x128", 5.0));
  db.put(test_entry("matmul_tiled_f16", "64x64x64", 7.0));
  db.put(test_entry("matmul_tiled_f32", "64x64x64", 1.0));
  ASSERT_EQ(db.entries().size(), 3u);
  const Entry* replaced = db.find("matmul_tiled_f32", "64x64x64");
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->time_ms, 1.0);
  EXPECT_EQ(&db.entries()[0], replaced);  // replaced in place, not appended
  ASSERT_NE(db.find("matmul_tiled_f16", "64x64x64"), nullptr);
  EXPECT_EQ(db.find("matmul_tiled_f16", "64x64x64")->time_ms, 7.0);
  EXPECT_EQ(db.find("matmul_tiled_f16", "128x128x128"), nullptr);
  EXPECT_EQ(db.find("attention", "64x64x64"), nullptr);
}

TEST_F(TuningDbTest, SavedEntriesLoadBackIdentically) {
  Database db(test_key());
  Entry specialized = test_entry("matmul_tiled_f32", "1024x1024x1024", 1.0 / 3.0);
  specialized.default_time_ms = 0.1 + 0.2;  // not exactly representable in few digits
  specialized.specializations = {{7, 0}, {0, 4294967295u}, {3, 3}};
  specialized.block[0] = 256;
  specialized.block[1] = 2;
  specialized.block[2] = 3;
  Entry plain = test_entry("matmul_naive_f32", "0x8x1", 1e-9);
  plain.specializations.clear();
  plain.default_time_ms = 12345.678901234567;
  plain.label = "";
  Entry spaced = test_entry("matmul_tiled_f16", "64x64x64", 0.0);
  spaced.label = "  two leading spaces, a tab\tand a trailing space ";
  for (const Entry& e : {specialized, plain, spaced}) db.put(e);

  std::string error = "left over";
  ASSERT_TRUE(db.save(path_, &error)) << error;
  EXPECT_EQ(error, "");

  std::string warning = "left over";
  const Database loaded = Database::load(path_, test_key(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(loaded.key().driver, test_key().driver);
  ASSERT_EQ(loaded.entries().size(), 3u);
  for (const Entry& e : {specialized, plain, spaced}) {
    const Entry* found = loaded.find(e.family, e.bucket);
    ASSERT_NE(found, nullptr) << e.family;
    expect_same_entry(e, *found);
  }

  // The file is the documented text format: header first, checksum last, entries sorted.
  const std::string text = read_text(path_);
  EXPECT_EQ(text.rfind(kValidHeader, 0), 0u) << text;
  const size_t checksum_at = text.rfind("checksum ");
  ASSERT_NE(checksum_at, std::string::npos);
  EXPECT_EQ(text.substr(checksum_at), checksum_line(text.substr(0, checksum_at)));
  EXPECT_NE(text.find("entry matmul_tiled_f32 1024x1024x1024 matmul_tiled 7=0,0=4294967295,3=3 "
                      "256,2,3 "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("entry matmul_naive_f32 0x8x1 matmul_tiled - 16,16,1 "), std::string::npos)
      << text;
  EXPECT_LT(text.find("matmul_naive_f32"), text.find("matmul_tiled_f16"));
  EXPECT_LT(text.find("matmul_tiled_f16"), text.find("matmul_tiled_f32"));
}

TEST_F(TuningDbTest, EmptyDriverRoundTrips) {
  DeviceKey key = test_key();
  key.driver = "";
  Database db(key);
  db.put(test_entry("matmul_tiled_f32", "64x64x64"));
  std::string error;
  ASSERT_TRUE(db.save(path_, &error)) << error;
  std::string warning;
  EXPECT_EQ(Database::load(path_, key, &warning).entries().size(), 1u);
  EXPECT_EQ(warning, "");
}

TEST_F(TuningDbTest, MissingFileIsEmptyWithoutWarning) {
  std::string warning = "left over";
  const Database db = Database::load(path_, test_key(), &warning);
  EXPECT_TRUE(db.entries().empty());
  EXPECT_EQ(warning, "");
  EXPECT_EQ(db.key().pack_hash, test_key().pack_hash);
  // A missing directory is the same as a missing file; a null warning is allowed.
  EXPECT_TRUE(
      Database::load(directory_ + "/no/such/dir/x.tune", test_key(), nullptr).entries().empty());
}

TEST_F(TuningDbTest, RandomBytesAreRejected) {
  std::mt19937 random(1234);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  write_text(path_, bytes);
  expect_rejected("is not a tuning database");
}

TEST_F(TuningDbTest, EmptyFileIsRejected) {
  write_text(path_, "");
  expect_rejected("it is empty");
}

TEST_F(TuningDbTest, TruncatedFileIsRejected) {
  const std::string text = save_valid_file();
  // Cut in the middle of a line, then exactly at a line end: both are truncations.
  write_text(path_, text.substr(0, text.size() / 2));
  expect_rejected("truncated");
  const std::string cut_at_line = text.substr(0, text.rfind('\n', text.size() / 2) + 1);
  write_text(path_, cut_at_line);
  expect_rejected("truncated");
  write_text(path_, text.substr(0, text.size() - 1));  // only the final newline is missing
  expect_rejected("truncated");
}

TEST_F(TuningDbTest, FlippedByteFailsTheChecksum) {
  std::string text = save_valid_file();
  const size_t entry_at = text.find("entry matmul_tiled_f16");
  ASSERT_NE(entry_at, std::string::npos);
  // "f16" -> "f36": still a well-formed entry, so only the checksum can catch it.
  text[entry_at + std::string("entry matmul_tiled_f").size()] = '3';
  write_text(path_, text);
  expect_rejected("checksum does not match");
}

TEST_F(TuningDbTest, UnknownFormatVersionIsRejected) {
  std::string text = save_valid_file();
  text.replace(0, std::string("hal-tune-db 1").size(), "hal-tune-db 2");
  write_text(path_, text);
  expect_rejected("format version 2");
}

TEST_F(TuningDbTest, MissingChecksumIsRejected) {
  std::string text = save_valid_file();
  text.erase(text.rfind("checksum "));
  write_text(path_, text);
  expect_rejected("does not end with a checksum line");
}

TEST_F(TuningDbTest, TextAfterTheChecksumIsRejected) {
  write_text(path_, save_valid_file() + "entry x 1 k - 1,1,1 1 1\n");
  expect_rejected("does not end with a checksum line");
}

// Files whose checksum is right but whose content breaks a rule of the format: only the parser
// can catch these, and any one of them must discard the whole file.
TEST_F(TuningDbTest, MalformedContentIsRejectedEvenWithAValidChecksum) {
  const std::string good_entry =
      "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 1 2 L\n";
  struct Case {
    std::string body;
    std::string reason;
  };
  const std::string header = kValidHeader;
  auto without = [&](const std::string& line) {
    std::string text = header;
    text.erase(text.find(line), line.size());
    return text;
  };
  const std::vector<Case> cases = {
      {header + good_entry + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,0,1 1 2 L\n",
       "dimension of 0"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 -1 2 L\n",
       "negative or not finite"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 nan 2 L\n",
       "negative or not finite"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 inf 2 L\n",
       "negative or not finite"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 1.5ms 2 L\n",
       "not both numbers"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,99999999999 1 2 L\n",
       "not three numbers"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16 1 2 L\n",
       "not three numbers"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0:64 16,16,1 1 2 L\n",
       "specializations"},
      {header + "entry matmul-tiled 64x64x64 matmul_tiled 0=64 16,16,1 1 2 L\n", "family"},
      {header + "entry matmul_tiled_f32 64by64 matmul_tiled 0=64 16,16,1 1 2 L\n", "bucket"},
      {header + "entry matmul_tiled_f32 64x64x64 matmul_tiled 0=64 16,16,1 1\n", "7 fields"},
      {header + "entry matmul_tiled_f32  64x64x64 matmul_tiled 0=64 16,16,1 1 2 L\n", "7 fields"},
      {header + good_entry + good_entry, "repeated or out of order"},
      {header + "garbage\n", "expected an entry line"},
      {without("hal 0.4.0\n"), "expected the \"hal\" line"},
      {without("backend vulkan\n"), "expected the \"backend\" line"},
      {header.substr(0, header.find("pack")) + "hal 0.4.0\n" + "pack 89abcdef01234567\n",
       "expected the \"pack\" line"},  // "hal" twice
      {"hal-tune-db 1\nbackend vulkan\ndevice 0123456789ABCDEF0123456789ABCDEF\n"
       "driver d\nhal 0.4.0\npack 89abcdef01234567\n",
       "device uuid"},
      {"hal-tune-db one\n", "format version \"one\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    write_text(path_, c.body + checksum_line(c.body));
    expect_rejected(c.reason);
  }
  // The same entry alone is valid: the cases above fail for the reason they test.
  const std::string body = header + good_entry;
  write_text(path_, body + checksum_line(body));
  std::string warning;
  EXPECT_EQ(Database::load(path_, test_key(), &warning).entries().size(), 1u);
  EXPECT_EQ(warning, "");
}

TEST_F(TuningDbTest, StaleFileIsRejectedNamingWhatDiffers) {
  save_valid_file();
  struct Case {
    void (*change)(DeviceKey*);
    std::string what;       // must appear in the warning
    std::string not_about;  // must not: the unchanged fields are not blamed
  };
  const std::vector<Case> cases = {
      {[](DeviceKey* k) { k->device_uuid = "fedcba9876543210fedcba9876543210"; },
       "for device 0123456789abcdef0123456789abcdef (this is fedcba9876543210fedcba9876543210)",
       "hal"},
      {[](DeviceKey* k) { k->driver = "Mesa 23.0.0 api 4206830"; },
       "for driver \"Mesa 22.3.6 api 4206830\" (this is \"Mesa 23.0.0 api 4206830\")", "device"},
      {[](DeviceKey* k) { k->hal_version = "0.5.0"; }, "by hal 0.4.0 (this is 0.5.0)", "driver"},
      {[](DeviceKey* k) { k->pack_hash = "0000000000000000"; },
       "for kernel pack 89abcdef01234567 (this is 0000000000000000)", "hal"},
      {[](DeviceKey* k) { k->backend = "cuda"; }, "for backend vulkan (this is cuda)", "pack"},
  };
  for (const Case& c : cases) {
    DeviceKey key = test_key();
    c.change(&key);
    SCOPED_TRACE(c.what);
    expect_rejected("it is stale: it was written " + c.what, key);
    std::string warning;
    Database::load(path_, key, &warning);
    EXPECT_EQ(warning.find(c.not_about + " "), std::string::npos) << warning;
  }
  // Several differences are all named, in one sentence.
  DeviceKey key = test_key();
  key.hal_version = "0.5.0";
  key.pack_hash = "0000000000000000";
  expect_rejected("by hal 0.4.0 (this is 0.5.0) and for kernel pack 89abcdef01234567", key);
}

TEST_F(TuningDbTest, SaveReplacesACorruptFile) {
  write_text(path_, "hal-tune-db 1\nthis is not what save writes\n");
  Database db(test_key());
  db.put(test_entry("matmul_tiled_f32", "64x64x64"));
  std::string error;
  ASSERT_TRUE(db.save(path_, &error)) << error;
  std::string warning;
  const Database loaded = Database::load(path_, test_key(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(loaded.entries().size(), 1u);
  expect_same_entry(db.entries()[0], loaded.entries()[0]);
}

TEST_F(TuningDbTest, SaveReplacesAStaleFileAndDropsItsEntries) {
  save_valid_file();
  DeviceKey newer = test_key();
  newer.hal_version = "0.5.0";
  Database db(newer);
  db.put(test_entry("matmul_tiled_f32", "64x64x64"));
  std::string error;
  ASSERT_TRUE(db.save(path_, &error)) << error;
  std::string warning;
  const Database loaded = Database::load(path_, newer, &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(loaded.entries().size(), 1u);
  EXPECT_EQ(loaded.entries()[0].bucket, "64x64x64");
}

TEST_F(TuningDbTest, SaveMergesWithTheEntriesOnDisk) {
  Database first(test_key());
  first.put(test_entry("matmul_tiled_f32", "64x64x64", 4.0));
  first.put(test_entry("matmul_tiled_f16", "64x64x64", 5.0));
  std::string error;
  ASSERT_TRUE(first.save(path_, &error)) << error;
  Database second(test_key());
  second.put(test_entry("matmul_tiled_f32", "64x64x64", 2.0));  // replaces first's
  second.put(test_entry("matmul_tiled_f32", "128x128x128", 3.0));
  ASSERT_TRUE(second.save(path_, &error)) << error;

  const Database loaded = Database::load(path_, test_key(), nullptr);
  ASSERT_EQ(loaded.entries().size(), 3u);
  EXPECT_EQ(loaded.find("matmul_tiled_f32", "64x64x64")->time_ms, 2.0);
  EXPECT_EQ(loaded.find("matmul_tiled_f16", "64x64x64")->time_ms, 5.0);
  EXPECT_EQ(loaded.find("matmul_tiled_f32", "128x128x128")->time_ms, 3.0);
  EXPECT_EQ(second.entries().size(), 2u);  // save does not change the database itself
  EXPECT_EQ(directory_listing(),
            (std::set<std::string>{fs::path(path_).filename().string(),
                                   fs::path(path_).filename().string() + ".lock"}));
}

TEST_F(TuningDbTest, SaveCreatesMissingDirectories) {
  const std::string nested = directory_ + "/a/b/c/db.tune";
  Database db(test_key());
  db.put(test_entry("matmul_tiled_f32", "64x64x64"));
  std::string error;
  ASSERT_TRUE(db.save(nested, &error)) << error;
  EXPECT_EQ(Database::load(nested, test_key(), nullptr).entries().size(), 1u);
}

TEST_F(TuningDbTest, SaveRefusesWhatTheFormatCannotHold) {
  std::string error;
  DeviceKey key = test_key();
  key.driver = "Mesa\n22.3.6";
  EXPECT_FALSE(Database(key).save(path_, &error));
  EXPECT_NE(error.find(path_), std::string::npos) << error;
  EXPECT_NE(error.find("newline"), std::string::npos) << error;

  Database db(test_key());
  Entry entry = test_entry("matmul_tiled_f32", "64x64x64");
  entry.label = "BM=64\nBN=64";
  db.put(entry);
  error.clear();
  EXPECT_FALSE(db.save(path_, &error));
  EXPECT_NE(error.find("newline"), std::string::npos) << error;

  entry.label = "fine";
  entry.block[1] = 0;
  db.put(entry);
  EXPECT_FALSE(db.save(path_, &error));
  EXPECT_NE(error.find("dimension of 0"), std::string::npos) << error;

  entry.block[1] = 1;
  entry.time_ms = -1;
  db.put(entry);
  EXPECT_FALSE(db.save(path_, &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;

  EXPECT_FALSE(fs::exists(path_));  // nothing was written
}

TEST_F(TuningDbTest, SaveReportsTheSystemError) {
  const std::string file = directory_ + "/a-file";
  write_text(file, "x");
  const std::string impossible = file + "/db.tune";  // a path below a regular file
  Database db(test_key());
  db.put(test_entry("matmul_tiled_f32", "64x64x64"));
  std::string error;
  EXPECT_FALSE(db.save(impossible, &error));
  EXPECT_EQ(error.rfind("cannot save tuning database " + impossible + ": ", 0), 0u) << error;
  EXPECT_NE(error.find("Not a directory"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST_F(TuningDbTest, ConcurrentThreadsKeepEveryEntryAndReadersNeverSeeAPartialFile) {
  constexpr int kWriters = 8;
  constexpr int kSavesEach = 25;
  std::atomic<int> failed_saves{0};
  std::atomic<bool> writing{true};
  std::atomic<int> reader_warnings{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> threads;
  // A reader that loads while writers replace the file: the rename must be atomic.
  std::thread reader([&] {
    while (writing.load()) {
      std::string warning;
      Database::load(path_, test_key(), &warning);
      if (!warning.empty()) reader_warnings.fetch_add(1);
      reads.fetch_add(1);
    }
  });
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kSavesEach; ++i) {
        Database db(test_key());
        db.put(test_entry("family_" + std::to_string(w), "64x64x64", i));
        std::string error;
        if (!db.save(path_, &error)) failed_saves.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  writing.store(false);
  reader.join();

  EXPECT_EQ(failed_saves.load(), 0);
  EXPECT_EQ(reader_warnings.load(), 0);
  EXPECT_GT(reads.load(), 0);
  std::string warning;
  const Database loaded = Database::load(path_, test_key(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(loaded.entries().size(), static_cast<size_t>(kWriters));
  for (int w = 0; w < kWriters; ++w) {
    const Entry* entry = loaded.find("family_" + std::to_string(w), "64x64x64");
    ASSERT_NE(entry, nullptr) << w;
    EXPECT_EQ(entry->time_ms, kSavesEach - 1);  // each writer's last save wins
  }
  const std::string name = fs::path(path_).filename().string();
  EXPECT_EQ(directory_listing(), (std::set<std::string>{name, name + ".lock"}));
}

TEST_F(TuningDbTest, ConcurrentProcessesKeepEveryEntry) {
  constexpr int kProcesses = 3;
  constexpr int kSavesEach = 30;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child must not return into the test framework: it reports through its exit status.
      int status = 0;
      for (int i = 0; i < kSavesEach; ++i) {
        Database db(test_key());
        db.put(test_entry("process_" + std::to_string(p), "1x2x4", i));
        if (!db.save(path_, nullptr)) status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string warning;
  const Database loaded = Database::load(path_, test_key(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(loaded.entries().size(), static_cast<size_t>(kProcesses));
  for (int p = 0; p < kProcesses; ++p) {
    const Entry* entry = loaded.find("process_" + std::to_string(p), "1x2x4");
    ASSERT_NE(entry, nullptr) << p;
    EXPECT_EQ(entry->time_ms, kSavesEach - 1);
  }
  const std::string name = fs::path(path_).filename().string();
  EXPECT_EQ(directory_listing(), (std::set<std::string>{name, name + ".lock"}));
}

TEST(TuningDbFormatTable, ShowsTheKeyAndSortedEntriesWithSpeedups) {
  Database db(test_key());
  Entry slow = test_entry("matmul_tiled_f32", "512x512x512", 4.0);
  slow.default_time_ms = 2.0;
  slow.label = "BM=32 BN=32 BK=8";
  db.put(slow);
  db.put(test_entry("matmul_tiled_f32", "1024x1024x1024", 1.5));  // default 3.0: 2x
  Entry unmeasured = test_entry("matmul_tiled_f16", "64x64x64", 0.0);
  db.put(unmeasured);
  const std::string table = format_table(db);

  EXPECT_NE(table.find("device   0123456789abcdef0123456789abcdef\n"), std::string::npos);
  EXPECT_NE(table.find("driver   Mesa 22.3.6 api 4206830\n"), std::string::npos);
  EXPECT_NE(table.find("hal      0.4.0\n"), std::string::npos);
  const size_t header = table.find("family");
  const size_t f16 = table.find("matmul_tiled_f16");
  const size_t big = table.find("1024x1024x1024");
  const size_t small = table.find("512x512x512");
  ASSERT_NE(header, std::string::npos);
  ASSERT_NE(f16, std::string::npos);
  ASSERT_NE(big, std::string::npos);
  ASSERT_NE(small, std::string::npos);
  EXPECT_LT(header, f16);
  EXPECT_LT(f16, big);  // by family, then by bucket (as text)
  EXPECT_LT(big, small);
  const std::string big_line = table.substr(big, table.find('\n', big) - big);
  EXPECT_NE(big_line.find("BM=64 BN=128 BK=16"), std::string::npos) << big_line;
  EXPECT_NE(big_line.find("1.500"), std::string::npos) << big_line;
  EXPECT_NE(big_line.find("3.000"), std::string::npos) << big_line;
  EXPECT_NE(big_line.find("2.00x"), std::string::npos) << big_line;
  const std::string small_line = table.substr(small, table.find('\n', small) - small);
  EXPECT_NE(small_line.find("0.50x"), std::string::npos) << small_line;
  const std::string f16_line = table.substr(f16, table.find('\n', f16) - f16);
  EXPECT_EQ(f16_line.back(), '-') << f16_line;

  EXPECT_NE(format_table(Database(test_key())).find("(no entries)"), std::string::npos);
}

}  // namespace
}  // namespace hal_kernels::tune
