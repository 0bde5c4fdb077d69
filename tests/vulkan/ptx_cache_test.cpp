// The PTX translation cache's files (src/vulkan/ptx_cache.h), without a device: what is written
// is read back; any other key, a truncated file, a flipped byte or a file whose contents lie
// about their own layout is a miss, never a crash.
#include "vulkan/ptx_cache.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using hal::ptx_spirv::KernelInfo;
using hal::ptx_spirv::Target;
using hal::ptx_spirv::Translation;
using hal::vulkan::ptx_cache_path;
using hal::vulkan::read_ptx_cache;
using hal::vulkan::write_ptx_cache;

const std::string kPtx = ".version 7.0\n.target sm_70\n.address_size 64\n// a stand-in\n";

Translation sample() {
  Translation t;
  t.words = {0x07230203u, 0x00010500u, 7u, 42u, 0u, 0xCAFEF00Du};
  KernelInfo a;
  a.name = "first";
  a.param_bytes = 20;
  a.params_in_buffer = true;
  a.param_offsets = {0, 8, 16};
  a.static_shared_bytes = 512;
  a.dynamic_shared = true;
  a.maxntid = 256;
  a.warp_size = 32;
  KernelInfo b;
  b.name = "_Z6secondPf";
  b.param_bytes = 8;
  b.param_offsets = {0};
  b.reqntid[0] = 64;
  b.reqntid[1] = 2;
  b.reqntid[2] = 1;
  t.kernels = {a, b};
  t.refused = {{"third", "kernel 'third', PTX line 9: 'shfl.sync.bfly.b32' is warp-level"}};
  return t;
}

void expect_same(const Translation& x, const Translation& y) {
  EXPECT_EQ(x.words, y.words);
  ASSERT_EQ(x.kernels.size(), y.kernels.size());
  for (size_t k = 0; k < x.kernels.size(); ++k) {
    const KernelInfo& a = x.kernels[k];
    const KernelInfo& b = y.kernels[k];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.param_bytes, b.param_bytes);
    EXPECT_EQ(a.params_in_buffer, b.params_in_buffer);
    EXPECT_EQ(a.param_offsets, b.param_offsets);
    EXPECT_EQ(a.static_shared_bytes, b.static_shared_bytes);
    EXPECT_EQ(a.dynamic_shared, b.dynamic_shared);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(a.reqntid[d], b.reqntid[d]);
    EXPECT_EQ(a.maxntid, b.maxntid);
    EXPECT_EQ(a.warp_size, b.warp_size);
  }
  ASSERT_EQ(x.refused.size(), y.refused.size());
  for (size_t k = 0; k < x.refused.size(); ++k) {
    EXPECT_EQ(x.refused[k].name, y.refused[k].name);
    EXPECT_EQ(x.refused[k].reason, y.refused[k].reason);
  }
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// The file format's checksum, to forge files that pass it.
uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void reseal(std::vector<uint8_t>* file) {
  const size_t body = file->size() - 8;
  const uint64_t sum = fnv1a(file->data(), body);
  for (int i = 0; i < 8; ++i) (*file)[body + i] = static_cast<uint8_t>(sum >> (8 * i));
}

class PtxCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("hal-ptx-cache-test-" + std::to_string(getpid())))
               .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(PtxCache, WhatIsWrittenIsReadBack) {
  const Target target;
  const std::string path = ptx_cache_path(dir_, kPtx, target);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.rfind(dir_ + "/ptx-spirv/", 0), 0u) << path;
  Translation out;
  std::string why;
  EXPECT_FALSE(read_ptx_cache(path, kPtx, target, &out, &why));
  EXPECT_EQ(why, "no such file");
  write_ptx_cache(path, kPtx, target, sample());
  ASSERT_TRUE(read_ptx_cache(path, kPtx, target, &out, &why)) << why;
  expect_same(out, sample());
  // Written again (another translation), replaced whole.
  Translation other = sample();
  other.kernels.pop_back();
  other.words.push_back(99);
  write_ptx_cache(path, kPtx, target, other);
  ASSERT_TRUE(read_ptx_cache(path, kPtx, target, &out, &why)) << why;
  expect_same(out, other);
}

// Over the budget, the least recently used translations go (a read counts as a use), down to
// three quarters of it; files that are not the cache's own stay.
TEST_F(PtxCache, PruningRemovesTheLeastRecentlyUsed) {
  const std::string ptx_dir = dir_ + "/ptx-spirv";
  std::filesystem::create_directories(ptx_dir);
  const auto now = std::filesystem::file_time_type::clock::now();
  std::vector<std::string> paths;
  for (int i = 0; i < 8; ++i) {
    Target target;
    target.max_shared_bytes = 1000u + static_cast<uint32_t>(i);  // eight different keys
    paths.push_back(ptx_cache_path(dir_, kPtx, target));
    write_file(paths.back(), std::vector<uint8_t>(1000, 0));
    // The first is the oldest.
    std::filesystem::last_write_time(paths.back(), now - std::chrono::hours(8 - i));
  }
  // The oldest file is used: it becomes the newest.
  Target first;
  first.max_shared_bytes = 1000;
  write_ptx_cache(paths[0], kPtx, first, sample());
  Translation out;
  std::string why;
  ASSERT_TRUE(read_ptx_cache(paths[0], kPtx, first, &out, &why)) << why;
  write_file(ptx_dir + "/notes.txt", std::vector<uint8_t>(5000, 0));

  hal::vulkan::prune_ptx_cache(ptx_dir, 6000);  // eight files of about 1000 bytes
  // Down to 4500 bytes: paths[1..3] went (oldest first); paths[0] (just read, a few hundred
  // bytes) and [4..7] stay.
  EXPECT_TRUE(std::filesystem::exists(paths[0]));
  for (int i = 1; i <= 3; ++i) EXPECT_FALSE(std::filesystem::exists(paths[i])) << i;
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::filesystem::exists(paths[i])) << i;
  EXPECT_TRUE(std::filesystem::exists(ptx_dir + "/notes.txt"));
  // Under the budget nothing goes.
  hal::vulkan::prune_ptx_cache(ptx_dir, 1u << 20);
  EXPECT_TRUE(std::filesystem::exists(paths[5]));
}

TEST_F(PtxCache, NoDirectoryNoCache) {
  EXPECT_EQ(ptx_cache_path("", kPtx, Target{}), "");
}

TEST_F(PtxCache, EveryPartOfTheKeyCounts) {
  const Target target;
  const std::string path = ptx_cache_path(dir_, kPtx, target);
  write_ptx_cache(path, kPtx, target, sample());
  std::vector<Target> others(12, target);
  others[0].float64 = true;
  others[1].int16 = true;
  others[2].int8 = true;
  others[3].float16 = true;
  others[4].storage_buffer_8bit = true;
  others[5].storage_buffer_16bit = true;
  others[6].int64_atomics = true;
  others[7].float32_atomic_add = true;
  others[8].max_push_constant_bytes = 256;
  others[9].max_shared_bytes = 49152;
  others[10].warp32 = true;
  others[11].no_warp32 = "the device's subgroups are 16 lanes wide";
  for (size_t i = 0; i < others.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_NE(ptx_cache_path(dir_, kPtx, others[i]), path);
    // Even read from the same file (a hash collision), another key is a miss.
    Translation out;
    std::string why;
    EXPECT_FALSE(read_ptx_cache(path, kPtx, others[i], &out, &why));
    EXPECT_NE(why.find("another"), std::string::npos) << why;
  }
  const std::string other_ptx = kPtx + " ";
  EXPECT_NE(ptx_cache_path(dir_, other_ptx, target), path);
  Translation out;
  std::string why;
  EXPECT_FALSE(read_ptx_cache(path, other_ptx, target, &out, &why));
  EXPECT_FALSE(read_ptx_cache(path, kPtx.substr(1), target, &out, &why));
}

TEST_F(PtxCache, TruncatedOrCorruptFilesAreMisses) {
  const Target target;
  const std::string path = ptx_cache_path(dir_, kPtx, target);
  write_ptx_cache(path, kPtx, target, sample());
  const std::vector<uint8_t> good = read_file(path);
  ASSERT_GT(good.size(), 100u);
  for (size_t size = 0; size < good.size(); ++size) {
    write_file(path, std::vector<uint8_t>(good.begin(), good.begin() + size));
    Translation out;
    std::string why;
    EXPECT_FALSE(read_ptx_cache(path, kPtx, target, &out, &why)) << "size " << size;
  }
  for (size_t at = 0; at < good.size(); ++at) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x20;
    write_file(path, bad);
    Translation out;
    std::string why;
    EXPECT_FALSE(read_ptx_cache(path, kPtx, target, &out, &why)) << "byte " << at;
  }
}

// Files that pass the checksum but whose payload lies about its own layout: counts beyond what
// the file holds or PTX allows, trailing bytes. Each is a miss.
TEST_F(PtxCache, ForgedLayoutsAreMisses) {
  const Target target;
  const std::string path = ptx_cache_path(dir_, kPtx, target);
  write_ptx_cache(path, kPtx, target, sample());
  const std::vector<uint8_t> good = read_file(path);
  // The payload's size, from the format: the kernel count, each kernel, the refused count, each
  // refused kernel, the word count and words, the checksum.
  size_t payload = 4 + 4 + 8 + 4 * sample().words.size() + 8;
  for (const KernelInfo& k : sample().kernels) {
    payload += 4 + k.name.size() + 4 + 1 + 4 + 4 * k.param_offsets.size() + 4 + 1 + 12 + 4 + 4;
  }
  for (const auto& r : sample().refused) payload += 4 + r.name.size() + 4 + r.reason.size();
  ASSERT_GT(good.size(), payload);
  const size_t kernels_at = good.size() - payload;
  const size_t words_at = good.size() - 8 - 4 * sample().words.size() - 8;
  const auto forge = [&](size_t at, uint64_t value, int bytes) {
    std::vector<uint8_t> bad = good;
    for (int i = 0; i < bytes; ++i) bad[at + i] = static_cast<uint8_t>(value >> (8 * i));
    reseal(&bad);
    write_file(path, bad);
    Translation out;
    std::string why;
    return read_ptx_cache(path, kPtx, target, &out, &why);
  };
  // The unforged file still reads (the offsets above are right).
  ASSERT_TRUE(forge(kernels_at, 2, 4));
  EXPECT_FALSE(forge(kernels_at, 0xFFFFFFFFu, 4));
  EXPECT_FALSE(forge(kernels_at, 3, 4));
  EXPECT_FALSE(forge(kernels_at, 1, 4));
  EXPECT_FALSE(forge(kernels_at + 4, 0xFFFFFFF0u, 4));  // the first name's length
  EXPECT_FALSE(forge(words_at, uint64_t{1} << 62, 8));
  EXPECT_FALSE(forge(words_at, sample().words.size() + 1, 8));
  EXPECT_FALSE(forge(words_at, sample().words.size() - 1, 8));
  size_t refused_at = words_at - 4;
  for (const auto& r : sample().refused) refused_at -= 4 + r.name.size() + 4 + r.reason.size();
  ASSERT_TRUE(forge(refused_at, 1, 4));
  EXPECT_FALSE(forge(refused_at, 0xFFFFFFFFu, 4));
  EXPECT_FALSE(forge(refused_at, 2, 4));
  EXPECT_FALSE(forge(refused_at, 0, 4));
  EXPECT_FALSE(forge(refused_at + 4, 0xFFFFFFF0u, 4));  // the refused name's length
}

}  // namespace
