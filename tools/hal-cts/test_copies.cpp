// Area Copies: host to device, device to host, device to device (between allocations and within
// one), byte and word fills, at offsets and sizes that are not multiples of 4, zero sizes, and
// large copies; every byte of the destination is checked, including the bytes around the range.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cts.h"

namespace cts {
namespace {

struct Range {
  size_t offset, size;
};
// Offsets and sizes that are not multiples of 4, at both ends of the buffer.
const Range kRanges[] = {{0, 1},    {1, 1},       {1, 3},     {3, 5},      {2, 6},
                         {7, 1021}, {4093, 4099}, {0, 9000},  {8999, 1},   {5, 8990},
                         {13, 257}, {256, 4096},  {1023, 33}, {6000, 2999}};
constexpr size_t kBufferBytes = 9000;

class Copies : public DeviceTest {
 protected:
  // Sets the whole device buffer to |bytes| and returns them.
  void upload_all(hal_deviceptr ptr, const std::vector<uint8_t>& bytes) {
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, ptr, bytes.data(), bytes.size()));
  }
  std::vector<uint8_t> download_all(hal_deviceptr ptr, size_t bytes) {
    std::vector<uint8_t> out(bytes, 0xEE);
    const hal_status a = hal_memcpy_dtoh(stream_, out.data(), ptr, bytes);
    EXPECT_EQ(a, HAL_SUCCESS) << describe(a);
    const hal_status b = hal_stream_synchronize(stream_);
    EXPECT_EQ(b, HAL_SUCCESS) << describe(b);
    return out;
  }
  void expect_bytes(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got,
                    const std::string& what) {
    ASSERT_EQ(want.size(), got.size());
    const long long at = first_difference(want.data(), got.data(), want.size());
    EXPECT_EQ(at, -1) << what << ": first wrong byte at " << at << " (want "
                      << int(want[at < 0 ? 0 : at]) << ", got " << int(got[at < 0 ? 0 : at]) << ")";
  }
};

TEST_P(Copies, HostToDeviceAndBack) {
  Buffer d(device(), kBufferBytes);
  ASSERT_TRUE(d.ok()) << d.error();
  uint32_t seed = 1;
  for (const Range& r : kRanges) {
    const std::string what =
        "htod at " + std::to_string(r.offset) + " size " + std::to_string(r.size);
    std::vector<uint8_t> want = pattern(kBufferBytes, seed++);
    upload_all(d.ptr, want);
    const std::vector<uint8_t> part = pattern(r.size, seed++);
    CTS_ASSERT_OK(hal_memcpy_htod(stream_, d.ptr + r.offset, part.data(), r.size));
    std::copy(part.begin(), part.end(), want.begin() + static_cast<long>(r.offset));
    expect_bytes(want, download_all(d.ptr, kBufferBytes), what);
    // And the range alone, read back from its offset.
    std::vector<uint8_t> back(r.size, 0);
    CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, back.data(), d.ptr + r.offset, r.size));
    CTS_ASSERT_OK(hal_stream_synchronize(stream_));
    expect_bytes(part, back, "dtoh at " + std::to_string(r.offset));
  }
}

TEST_P(Copies, DeviceToDevice) {
  Buffer a(device(), kBufferBytes), b(device(), kBufferBytes);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error() << b.error();
  uint32_t seed = 100;
  for (const Range& r : kRanges) {
    // Between allocations, source and destination at different odd offsets.
    const size_t dst_offset = (r.offset * 7 + 3) % (kBufferBytes - r.size + 1);
    const std::string what = "dtod " + std::to_string(r.offset) + " -> " +
                             std::to_string(dst_offset) + " size " + std::to_string(r.size);
    const std::vector<uint8_t> src = pattern(kBufferBytes, seed++);
    std::vector<uint8_t> want = pattern(kBufferBytes, seed++);
    upload_all(a.ptr, src);
    upload_all(b.ptr, want);
    CTS_ASSERT_OK(hal_memcpy_dtod(stream_, b.ptr + dst_offset, a.ptr + r.offset, r.size));
    std::copy_n(src.begin() + static_cast<long>(r.offset), r.size,
                want.begin() + static_cast<long>(dst_offset));
    expect_bytes(want, download_all(b.ptr, kBufferBytes), what);
    expect_bytes(src, download_all(a.ptr, kBufferBytes), what + " (source unchanged)");
  }
  // Within one allocation, ranges that do not overlap.
  std::vector<uint8_t> want = pattern(kBufferBytes, 7);
  upload_all(a.ptr, want);
  CTS_ASSERT_OK(hal_memcpy_dtod(stream_, a.ptr + 5001, a.ptr + 3, 3333));
  std::memmove(want.data() + 5001, want.data() + 3, 3333);
  expect_bytes(want, download_all(a.ptr, kBufferBytes), "dtod within one allocation");
}

TEST_P(Copies, FillBytes) {
  Buffer d(device(), kBufferBytes);
  ASSERT_TRUE(d.ok()) << d.error();
  uint8_t value = 1;
  for (const Range& r : kRanges) {
    std::vector<uint8_t> want = pattern(kBufferBytes, value);
    upload_all(d.ptr, want);
    CTS_ASSERT_OK(hal_memset_d8(stream_, d.ptr + r.offset, value, r.size));
    std::fill_n(want.begin() + static_cast<long>(r.offset), r.size, value);
    expect_bytes(want, download_all(d.ptr, kBufferBytes),
                 "memset_d8 at " + std::to_string(r.offset) + " size " + std::to_string(r.size));
    value = static_cast<uint8_t>(value * 37 + 11);
  }
}

TEST_P(Copies, FillWords) {
  Buffer d(device(), kBufferBytes);
  ASSERT_TRUE(d.ok()) << d.error();
  const Range words[] = {{0, 1},   {4, 1}, {8, 3}, {12, 1000}, {4096, 1}, {0, kBufferBytes / 4},
                         {8996, 1}};
  uint32_t value = 0xA5C3F00Fu;
  for (const Range& r : words) {
    std::vector<uint8_t> want = pattern(kBufferBytes, value);
    upload_all(d.ptr, want);
    CTS_ASSERT_OK(hal_memset_d32(stream_, d.ptr + r.offset, value, r.size));
    for (size_t i = 0; i < r.size; ++i) std::memcpy(&want[r.offset + 4 * i], &value, 4);
    expect_bytes(want, download_all(d.ptr, kBufferBytes),
                 "memset_d32 at " + std::to_string(r.offset) + " count " + std::to_string(r.size));
    value = value * 1664525u + 1013904223u;
  }
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_ARGUMENT, "hal_memset_d32",
                    hal_memset_d32(stream_, d.ptr + 2, 1, 4));
}

TEST_P(Copies, ZeroSizes) {
  Buffer d(device(), 64);
  ASSERT_TRUE(d.ok()) << d.error();
  uint8_t host[4] = {1, 2, 3, 4};
  CTS_EXPECT_OK(hal_memcpy_htod(stream_, d.ptr, host, 0));
  CTS_EXPECT_OK(hal_memcpy_dtoh(stream_, host, d.ptr, 0));
  CTS_EXPECT_OK(hal_memcpy_dtod(stream_, d.ptr, d.ptr + 8, 0));
  CTS_EXPECT_OK(hal_memset_d8(stream_, d.ptr, 0, 0));
  CTS_EXPECT_OK(hal_memset_d32(stream_, d.ptr, 0, 0));
  CTS_EXPECT_OK(hal_stream_synchronize(stream_));
  EXPECT_EQ(host[0], 1);
  CTS_EXPECT_STATUS(HAL_ERROR_INVALID_HANDLE, "hal_memcpy_htod",
                    hal_memcpy_htod(nullptr, d.ptr, host, 0));
}

TEST_P(Copies, Large) {
  const size_t want_bytes = options().quick ? (size_t{16} << 20) : (size_t{256} << 20);
  const size_t bytes =
      static_cast<size_t>(std::min<uint64_t>(want_bytes, info().max_allocation_size / 4)) + 3;
  Buffer a(device(), bytes), b(device(), bytes);
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  const std::vector<uint8_t> in = pattern(bytes, 77);
  CTS_ASSERT_OK(hal_memcpy_htod(stream_, a.ptr, in.data(), bytes));
  CTS_ASSERT_OK(hal_memcpy_dtod(stream_, b.ptr, a.ptr, bytes));
  std::vector<uint8_t> out(bytes, 0);
  CTS_ASSERT_OK(hal_memcpy_dtoh(stream_, out.data(), b.ptr, bytes));
  CTS_ASSERT_OK(hal_stream_synchronize(stream_));
  expect_bytes(in, out, std::to_string(bytes) + " bytes through htod, dtod, dtoh");
}

INSTANTIATE_TEST_SUITE_P(, Copies, ::testing::ValuesIn(device_params()), device_name);

}  // namespace
}  // namespace cts
