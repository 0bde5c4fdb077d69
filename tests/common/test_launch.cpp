// hal_launch: argument and geometry validation, and what reaches the backend.
#include "test_util.h"

#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace hal_test {
namespace {

// The double's GPU-like device: max block {256,128,64}, 256 threads, grid {65535,1024,64},
// 16384 bytes of shared memory, pointer alignment 16.
class Launch : public DoubleTest {
 protected:
  void SetUp() override {
    DoubleTest::SetUp();
    const std::vector<uint8_t> blob = spirv_blob(200);
    declare_module(blob,
                   "vadd(ptr, ptr, ptr, u32);"
                   "fixed(ptr) block=64,2,1;"
                   "partial(ptr) block=32,0,1;"
                   "shared(ptr) shared=1024;"
                   "nodyn(ptr) nodynamic;"
                   "sized(ptr) sharedrequired;"
                   "opaque(?);"
                   "noargs();"
                   "small(u32) maxthreads=32;"
                   "wide(u32) maxthreads=512;"
                   "mixed(u8, ptr, f64, bytes12, i16);"
                   "raw(ptr4, ptr1, ptr)");
    module_ = load(gpu, blob);
    vadd_ = function(module_, "vadd");
    a_ = alloc(1024);
    b_ = alloc(1024);
    c_ = alloc(1024);
  }

  hal_status launch(hal_function f, hal_launch_config config, void* const* args) {
    return hal_launch(stream, f, &config, args);
  }

  // A valid configuration for vadd.
  static hal_launch_config ok_config() { return {{4, 1, 1}, {64, 1, 1}, 0}; }

  template <typename T>
  static std::vector<uint8_t> bytes_of(const T& value) {
    std::vector<uint8_t> out(sizeof(T));
    std::memcpy(out.data(), &value, sizeof(T));
    return out;
  }

  hal_module module_ = nullptr;
  hal_function vadd_ = nullptr;
  hal_deviceptr a_ = 0;
  hal_deviceptr b_ = 0;
  hal_deviceptr c_ = 0;
};

TEST_F(Launch, ValidLaunchReachesTheBackendExactly) {
  hal_deviceptr a = a_ + 16;  // interior pointers, aligned to 16
  hal_deviceptr b = b_;
  hal_deviceptr c = c_ + 1008;
  uint32_t n = 1234567;
  void* args[] = {&a, &b, &c, &n};
  const size_t before = gpu_double->launches().size();
  ASSERT_OK(launch(vadd_, {{3, 2, 1}, {32, 2, 4}, 100}, args));
  const std::vector<RecordedLaunch> launches = gpu_double->launches();
  ASSERT_EQ(launches.size(), before + 1);
  const RecordedLaunch& l = launches.back();
  EXPECT_EQ(l.function, "vadd");
  EXPECT_EQ(l.grid[0], 3u);
  EXPECT_EQ(l.grid[1], 2u);
  EXPECT_EQ(l.grid[2], 1u);
  EXPECT_EQ(l.block[0], 32u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.block[2], 4u);
  EXPECT_EQ(l.shared_bytes, 100u);
  ASSERT_EQ(l.args.size(), 4u);
  EXPECT_EQ(l.args[0], bytes_of(a));
  EXPECT_EQ(l.args[1], bytes_of(b));
  EXPECT_EQ(l.args[2], bytes_of(c));
  EXPECT_EQ(l.args[3], bytes_of(n));
  ASSERT_EQ(l.pointers.size(), 4u);
  EXPECT_EQ(l.pointers[0].alloc.base, a_);
  EXPECT_EQ(l.pointers[0].alloc.size, 1024u);
  EXPECT_EQ(l.pointers[0].offset, 16u);
  EXPECT_EQ(l.pointers[0].address(), a);
  EXPECT_EQ(l.pointers[1].alloc.base, b_);
  EXPECT_EQ(l.pointers[1].offset, 0u);
  EXPECT_EQ(l.pointers[2].alloc.base, c_);
  EXPECT_EQ(l.pointers[2].offset, 1008u);
  EXPECT_NE(l.pointers[0].alloc.backend_data, 0u);
  EXPECT_EQ(l.pointers[3].alloc.base, 0u) << "a value parameter has no allocation";
}

TEST_F(Launch, ValueArgumentsAreCopiedWithTheirSizes) {
  hal_function mixed = function(module_, "mixed");
  uint8_t u8 = 0xfe;
  hal_deviceptr p = b_ + 32;
  double f64 = -2.5;
  uint8_t twelve[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  int16_t i16 = -3;
  void* args[] = {&u8, &p, &f64, twelve, &i16};
  ASSERT_OK(launch(mixed, {{1, 1, 1}, {1, 1, 1}, 0}, args));
  const RecordedLaunch l = gpu_double->launches().back();
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(l.args[0], std::vector<uint8_t>{0xfe});
  EXPECT_EQ(l.args[1], bytes_of(p));
  EXPECT_EQ(l.args[2], bytes_of(f64));
  EXPECT_EQ(l.args[3], std::vector<uint8_t>(twelve, twelve + 12));
  EXPECT_EQ(l.args[4], bytes_of(i16));
  EXPECT_EQ(l.pointers[1].alloc.base, b_);
  EXPECT_EQ(l.pointers[1].offset, 32u);
}

TEST_F(Launch, ArgumentsMustBeThere) {
  const size_t before = gpu_double->launches().size();
  hal_launch_config config = ok_config();
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream, vadd_, nullptr, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"config is NULL"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_launch(stream, vadd_, &config, nullptr));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"args is NULL", "'vadd' takes 4 parameter(s)"}));
  uint32_t n = 1;
  void* missing_third[] = {&a_, &b_, nullptr, &n};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(vadd_, config, missing_third));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"args[2] is NULL"}));
  void* missing_value[] = {&a_, &b_, &c_, nullptr};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(vadd_, config, missing_value));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"args[3] is NULL"}));
  EXPECT_EQ(gpu_double->launches().size(), before);

  // Functions without parameters, or whose parameters are unknown, need no args.
  EXPECT_OK(launch(function(module_, "noargs"), config, nullptr));
  EXPECT_OK(launch(function(module_, "opaque"), config, nullptr));
  ASSERT_EQ(gpu_double->launches().size(), before + 2);
  EXPECT_TRUE(gpu_double->launches().back().args.empty());
  EXPECT_TRUE(gpu_double->launches().back().pointers.empty());
}

TEST_F(Launch, PointerArgumentsMustBeLiveAlignedAndOnTheDevice) {
  const size_t before = gpu_double->launches().size();
  uint32_t n = 1;
  auto with_first = [&](hal_deviceptr first) {
    void* args[] = {&first, &b_, &c_, &n};
    return launch(vadd_, ok_config(), args);
  };
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(0));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"'vadd' parameter 0 (a pointer)", "null device address"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(a_ + 1024));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"parameter 0", "not inside any live allocation"}));

  hal_deviceptr freed = alloc(64);
  free_now(gpu, freed);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(freed));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"parameter 0", "already freed"}));

  hal_deviceptr theirs = alloc(cpu, 64);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(theirs));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"parameter 0", "belongs to device double:0"}));

  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, with_first(a_ + 4));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"parameter 0", "not a multiple of 16"}));

  hal_deviceptr bad_third = c_ + 8;
  void* args[] = {&a_, &b_, &bad_third, &n};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(vadd_, ok_config(), args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"parameter 2"}));
  EXPECT_EQ(gpu_double->launches().size(), before);

  // The last aligned address inside the allocation is fine.
  EXPECT_OK(with_first(a_ + 1024 - 16));
}

// The common mistakes with a hand-built args[] get a message that says what the value most
// likely is, after the cause.
TEST_F(Launch, PointerMistakesAreNamed) {
  uint32_t n = 1;
  auto with_first = [&](hal_deviceptr first) {
    void* args[] = {&first, &b_, &c_, &n};
    return launch(vadd_, ok_config(), args);
  };
  // A host address: heap, stack, and hal_host_alloc memory.
  std::vector<float> heap(1 << 16);  // large enough to be a mapping of its own or the heap
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(reinterpret_cast<hal_deviceptr>(heap.data())));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"'vadd' parameter 0 (a pointer): the value 0x",
                                         "not inside any live allocation", "host memory",
                                         "not a device pointer", "hal_mem_alloc"}));
  // (AddressSanitizer moves stack arrays to a heap of its own, so the mapping is not named.)
  float on_stack[4] = {};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(reinterpret_cast<hal_deviceptr>(on_stack)));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"host memory (", "not a device pointer"}));
  // A global of this program lies in its executable's mapping, which the hint names.
  static const float kGlobal[4] = {1, 2, 3, 4};
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(reinterpret_cast<hal_deviceptr>(kGlobal)));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"host memory (" + std::string(exe) + ")"}));
  void* pinned = nullptr;
  ASSERT_OK(hal_host_alloc(gpu, 256, &pinned));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE,
             with_first(reinterpret_cast<hal_deviceptr>(pinned) + 8));  // interior too
  EXPECT_TRUE(LastErrorIs("hal_launch", {"hal_host_alloc", "hal_memcpy_htod"}));
  ASSERT_OK(hal_host_free(gpu, pinned));

  // args[] shifted by one: n and a float land in pointer slots.
  float alpha = 2.5f;
  hal_deviceptr bits = 0;
  std::memcpy(&bits, &alpha, sizeof alpha);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(bits));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"the float 2.5", "args[] shifted", "&ptr"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(1000));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"the integer 1000", "args[] shifted"}));
  // A 4-byte value read as 8: the count in the low half, whatever followed it above.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first((uint64_t{0xABCD1234} << 32) | 7));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"low 32 bits are the integer 7", "args[] shifted"}));

  // Freed memory where the device allocates.
  hal_deviceptr freed = alloc(64);
  free_now(gpu, freed);
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, with_first(freed));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"already freed", "has been freed", "after hal_mem_free"}));
}

// Each pointer parameter is checked against its own alignment (hal_param_info.alignment), not the
// device's: a raw address needs only what the kernel's accesses need.
TEST_F(Launch, PointerAlignmentIsPerParameter) {
  hal_function raw = function(module_, "raw");
  const uint32_t expected[] = {4, 1, 16};
  for (uint32_t i = 0; i < 3; ++i) {
    hal_param_info p{};
    p.struct_size = sizeof(p);
    ASSERT_OK(hal_function_get_param(raw, i, &p));
    EXPECT_EQ(p.alignment, expected[i]) << i;
  }
  const size_t before = gpu_double->launches().size();
  auto with = [&](hal_deviceptr x, hal_deviceptr y, hal_deviceptr z) {
    void* args[] = {&x, &y, &z};
    return launch(raw, ok_config(), args);
  };
  EXPECT_OK(with(a_ + 4, b_ + 3, c_ + 16));
  EXPECT_EQ(gpu_double->launches().size(), before + 1);
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, with(a_ + 2, b_, c_));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"'raw' parameter 0", "not a multiple of 4 bytes"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, with(a_, b_, c_ + 4));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"'raw' parameter 2", "not a multiple of 16 bytes"}));
  EXPECT_EQ(gpu_double->launches().size(), before + 1);
}

TEST_F(Launch, GridMustBePositiveAndWithinTheDevice) {
  uint32_t n = 1;
  void* args[] = {&a_, &b_, &c_, &n};
  const size_t before = gpu_double->launches().size();
  const char* axis[] = {"grid.x", "grid.y", "grid.z"};
  const uint32_t limit[] = {65535, 1024, 64};
  for (int i = 0; i < 3; ++i) {
    hal_launch_config config = ok_config();
    config.grid[i] = 0;
    EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, config, args));
    EXPECT_TRUE(LastErrorIs("hal_launch", {std::string(axis[i]) + " is 0"}));
    config.grid[i] = limit[i] + 1;
    EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, config, args));
    EXPECT_TRUE(LastErrorIs("hal_launch", {axis[i], std::to_string(limit[i] + 1),
                                           "limit " + std::to_string(limit[i])}));
  }
  EXPECT_EQ(gpu_double->launches().size(), before);
  EXPECT_OK(launch(vadd_, {{65535, 1024, 64}, {1, 1, 1}, 0}, args));
}

TEST_F(Launch, BlockMustFitTheDeviceAndTheFunction) {
  uint32_t n = 1;
  void* args[] = {&a_, &b_, &c_, &n};
  const size_t before = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {257, 1, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.x = 257", "limit 256"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {1, 129, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.y = 129"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {1, 1, 65}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.z = 65"}));
  // Each dimension fits but the product does not.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {128, 2, 2}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"512 threads", "is 256"}));
  // A dimension of 0 in an otherwise given block.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {32, 0, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.y is 0"}));
  // The function's own limit is lower than the device's.
  hal_function small = function(module_, "small");
  void* small_args[] = {&n};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(small, {{1, 1, 1}, {33, 1, 1}, 0}, small_args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"33 threads", "'small'", "is 32"}));
  // A function limit above the device's does not lift the device's limit.
  hal_function wide = function(module_, "wide");
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(wide, {{1, 1, 1}, {256, 2, 1}, 0}, small_args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"512 threads", "'wide'", "is 256"}));
  EXPECT_EQ(gpu_double->launches().size(), before);
  EXPECT_OK(launch(small, {{1, 1, 1}, {32, 1, 1}, 0}, small_args));
  EXPECT_OK(launch(wide, {{1, 1, 1}, {256, 1, 1}, 0}, small_args));
  EXPECT_OK(launch(vadd_, {{1, 1, 1}, {128, 2, 1}, 0}, args));
}

TEST_F(Launch, ZeroBlockMeansTheFixedBlock) {
  hal_function fixed = function(module_, "fixed");
  void* args[] = {&a_};
  ASSERT_OK(launch(fixed, {{2, 1, 1}, {0, 0, 0}, 0}, args));
  const RecordedLaunch l = gpu_double->launches().back();
  EXPECT_EQ(l.function, "fixed");
  EXPECT_EQ(l.block[0], 64u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.block[2], 1u);
  // The fixed block given explicitly is fine; any other block is refused.
  EXPECT_OK(launch(fixed, {{2, 1, 1}, {64, 2, 1}, 0}, args));
  const size_t before = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(fixed, {{2, 1, 1}, {128, 1, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"{128,1,1}", "fixed block size {64,2,1}", "'fixed'"}));
  // Without a fixed block, {0,0,0} is refused.
  uint32_t n = 1;
  void* vadd_args[] = {&a_, &b_, &c_, &n};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(vadd_, {{1, 1, 1}, {0, 0, 0}, 0}, vadd_args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"{0,0,0}", "'vadd' has no fixed block size",
                                         "up to 256 threads", ".reqntid", "e.g. {256,1,1}"}));
  EXPECT_EQ(gpu_double->launches().size(), before);
}

TEST_F(Launch, PartlyFixedBlockFixesItsGivenDimensions) {
  // x and z fixed by the kernel, y the launch's (a SPIR-V workgroup size with one dimension a
  // specialization constant).
  hal_function partial = function(module_, "partial");
  hal_function_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(hal_function_get_info(partial, &info));
  EXPECT_EQ(info.block[0], 0u) << "a partly fixed block is no fixed block to the user";
  void* args[] = {&a_};
  ASSERT_OK(launch(partial, {{1, 1, 1}, {32, 8, 1}, 0}, args));
  EXPECT_EQ(gpu_double->launches().back().block[1], 8u);
  const size_t before = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(partial, {{1, 1, 1}, {64, 1, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.x is 64", "'partial' fixes it at 32"}));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(partial, {{1, 1, 1}, {32, 1, 2}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"block.z is 2", "fixes it at 1"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(partial, {{1, 1, 1}, {0, 0, 0}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"no fixed block size", "e.g. {32,1,1}"}));
  EXPECT_EQ(gpu_double->launches().size(), before);
}

TEST_F(Launch, SharedMemoryMustFit) {
  hal_function shared = function(module_, "shared");
  void* args[] = {&a_};
  const size_t before = gpu_double->launches().size();
  // 1024 static + 15361 dynamic = 16385 > 16384.
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(shared, {{1, 1, 1}, {1, 1, 1}, 15361}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"16385 bytes", "1024 static", "15361 dynamic", "16384"}));
  uint32_t n = 1;
  void* vadd_args[] = {&a_, &b_, &c_, &n};
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {1, 1, 1}, 16385}, vadd_args));
  EXPECT_HAL(HAL_ERROR_OUT_OF_RANGE, launch(vadd_, {{1, 1, 1}, {1, 1, 1}, UINT32_MAX}, vadd_args));
  EXPECT_EQ(gpu_double->launches().size(), before);
  EXPECT_OK(launch(shared, {{1, 1, 1}, {1, 1, 1}, 15360}, args));
  EXPECT_EQ(gpu_double->launches().back().shared_bytes, 15360u);
}

TEST_F(Launch, DynamicSharedMemoryNeedsAFunctionThatCanSizeIt) {
  hal_function nodyn = function(module_, "nodyn");
  void* args[] = {&a_};
  const size_t before = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_NOT_SUPPORTED, launch(nodyn, {{1, 1, 1}, {1, 1, 1}, 4}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"shared_bytes is 4", "'nodyn'"}));
  EXPECT_EQ(gpu_double->launches().size(), before);
  EXPECT_OK(launch(nodyn, {{1, 1, 1}, {1, 1, 1}, 0}, args));
}

TEST_F(Launch, SharedBytesOfZeroRefusedWhereTheyAloneSizeTheArray) {
  hal_function sized = function(module_, "sized");
  void* args[] = {&a_};
  const size_t before = gpu_double->launches().size();
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, launch(sized, {{1, 1, 1}, {1, 1, 1}, 0}, args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"shared_bytes is 0", "'sized'"}));
  EXPECT_EQ(gpu_double->launches().size(), before);
  EXPECT_OK(launch(sized, {{1, 1, 1}, {1, 1, 1}, 16}, args));
}

TEST_F(Launch, BackendFailuresAreReported) {
  uint32_t n = 1;
  void* args[] = {&a_, &b_, &c_, &n};
  gpu_double->fail_next(HAL_ERROR_LAUNCH_FAILED, "too many resources requested (injected)");
  EXPECT_HAL(HAL_ERROR_LAUNCH_FAILED, launch(vadd_, ok_config(), args));
  EXPECT_TRUE(LastErrorIs("hal_launch", {"too many resources requested (injected)"}));
  EXPECT_OK(launch(vadd_, ok_config(), args));  // not a lost device
}

TEST_F(Launch, FunctionInfoDescribesTheFunction) {
  hal_function_info info{};
  info.struct_size = sizeof(info);
  ASSERT_OK(hal_function_get_info(vadd_, &info));
  EXPECT_STREQ(info.name, "vadd");
  EXPECT_EQ(info.param_count, 4u);
  EXPECT_EQ(info.block[0], 0u);
  EXPECT_EQ(info.static_shared_bytes, 0u);
  EXPECT_EQ(info.max_threads_per_block, 256u) << "the device's limit when the function has none";

  ASSERT_OK(hal_function_get_info(function(module_, "fixed"), &info));
  EXPECT_EQ(info.block[0], 64u);
  EXPECT_EQ(info.block[1], 2u);
  EXPECT_EQ(info.block[2], 1u);
  ASSERT_OK(hal_function_get_info(function(module_, "shared"), &info));
  EXPECT_EQ(info.static_shared_bytes, 1024u);
  ASSERT_OK(hal_function_get_info(function(module_, "small"), &info));
  EXPECT_EQ(info.max_threads_per_block, 32u);
  ASSERT_OK(hal_function_get_info(function(module_, "wide"), &info));
  EXPECT_EQ(info.max_threads_per_block, 256u) << "the tighter of the function's and the device's";
  hal_function opaque = function(module_, "opaque");
  ASSERT_OK(hal_function_get_info(opaque, &info));
  EXPECT_EQ(info.param_count, HAL_PARAM_COUNT_UNKNOWN);

  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_function_get_info(vadd_, nullptr));
  hal_function_info small{};
  small.struct_size = 4;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_function_get_info(vadd_, &small));
  EXPECT_TRUE(LastErrorIs("hal_function_get_info", {"hal_function_info.struct_size is 4"}));
  EXPECT_EQ(small.name[0], '\0');
}

TEST_F(Launch, ParamInfoDescribesEachParameter) {
  hal_param_info p{};
  p.struct_size = sizeof(p);
  ASSERT_OK(hal_function_get_param(vadd_, 0, &p));
  EXPECT_EQ(p.kind, HAL_PARAM_POINTER);
  EXPECT_EQ(p.size, 8u);
  EXPECT_EQ(p.alignment, 16u);  // the device's pointer_alignment, as for a bound buffer
  EXPECT_EQ(p.struct_size, sizeof(p));
  ASSERT_OK(hal_function_get_param(vadd_, 3, &p));
  EXPECT_EQ(p.kind, HAL_PARAM_VALUE);
  EXPECT_EQ(p.size, 4u);
  EXPECT_EQ(p.alignment, 4u);
  EXPECT_EQ(p.type, HAL_PARAM_TYPE_INTEGER);
  hal_function mixed = function(module_, "mixed");  // (u8, ptr, f64, bytes12, i16)
  const hal_param_type types[] = {HAL_PARAM_TYPE_INTEGER, HAL_PARAM_TYPE_UNKNOWN,
                                  HAL_PARAM_TYPE_FLOAT, HAL_PARAM_TYPE_UNKNOWN,
                                  HAL_PARAM_TYPE_INTEGER};
  for (uint32_t i = 0; i < 5; ++i) {
    ASSERT_OK(hal_function_get_param(mixed, i, &p));
    EXPECT_EQ(p.type, types[i]) << "parameter " << i;
  }
  ASSERT_OK(hal_function_get_param(mixed, 3, &p));
  EXPECT_EQ(p.size, 12u);
  EXPECT_EQ(p.alignment, 1u);

  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_function_get_param(vadd_, 4, &p));
  EXPECT_TRUE(LastErrorIs("hal_function_get_param", {"'vadd' has 4 parameter(s)", "index 4"}));
  EXPECT_HAL(HAL_ERROR_NOT_FOUND, hal_function_get_param(function(module_, "opaque"), 0, &p));
  EXPECT_TRUE(LastErrorIs("hal_function_get_param", {"unknown"}));
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_function_get_param(vadd_, 0, nullptr));
  hal_param_info zero{};
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_function_get_param(vadd_, 0, &zero));

  // A caller built against 0.2 passes the struct without |type|: it gets what it knows, and
  // nothing past its struct_size is written.
  hal_param_info old;
  std::memset(&old, 0xAB, sizeof old);
  old.struct_size = offsetof(hal_param_info, type);
  ASSERT_OK(hal_function_get_param(vadd_, 3, &old));
  EXPECT_EQ(old.size, 4u);
  EXPECT_EQ(old.struct_size, offsetof(hal_param_info, type));
  uint32_t untouched = 0;
  std::memcpy(&untouched, &old.type, sizeof untouched);
  EXPECT_EQ(untouched, 0xABABABABu);
  old.struct_size = offsetof(hal_param_info, type) - 1;
  EXPECT_HAL(HAL_ERROR_INVALID_ARGUMENT, hal_function_get_param(vadd_, 3, &old));
}

}  // namespace
}  // namespace hal_test
