// The CPU PTX driver through dlopen and cuGetProcAddress_v2: entry points and versions, error
// names, devices and their attributes, contexts.
#include "cuda/cuda_driver.h"
#include "driver_fixture.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ptx_cpu_test {
namespace {

// ===========================================================================================
// Entry points
// ===========================================================================================

TEST_F(DriverTest, ReportsCuda129) {
  int version = 0;
  ASSERT_OK(cu().cuDriverGetVersion(&version));
  EXPECT_EQ(version, 13000);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDriverGetVersion(nullptr));
}

TEST_F(DriverTest, GetProcAddressAnswersByVersion) {
  CUresult result = CUDA_SUCCESS;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  // cuMemAlloc_v2 is the CUDA 3.2 ABI: older requests would want the 32-bit one.
  EXPECT_NE(cu().resolve("cuMemAlloc", 3020, &result, &status), nullptr);
  EXPECT_EQ(cu().resolve("cuMemAlloc", 3010, &result, &status), nullptr);
  EXPECT_EQ(result, CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(cu().resolve("cuNoSuchEntryPoint", 12090, &result, &status), nullptr);
  EXPECT_EQ(result, CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  // The CUDA 12.5 cuStreamGetCtx takes a green context: not implemented, so not the old one.
  EXPECT_NE(cu().resolve("cuStreamGetCtx", 12040), nullptr);
  EXPECT_EQ(cu().resolve("cuStreamGetCtx", 12050, &result, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  // A version above the driver's.
  EXPECT_EQ(cu().resolve("cuMemAlloc", 13010, &result, &status), nullptr);
  EXPECT_EQ(result, CUDA_ERROR_INVALID_VALUE);

  void* function = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().get_proc(nullptr, &function, 12090, 0, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().get_proc("cuInit", nullptr, 12090, 0, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().get_proc("cuInit", &function, 12090, 4, nullptr));
  // The per-thread flag gets the legacy variants (there are no others); status is optional.
  EXPECT_OK(cu().get_proc("cuMemcpyHtoDAsync", &function, 12090,
                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr));
  EXPECT_EQ(function, reinterpret_cast<void*>(cu().cuMemcpyHtoDAsync));
  EXPECT_OK(cu().get_proc("cuInit", &function, 12090, CU_GET_PROC_ADDRESS_DEFAULT, nullptr));
  EXPECT_EQ(function, reinterpret_cast<void*>(cu().cuInit));
}

// CUDA 13 gave cuCtxSynchronize and cuCtxGetDevice a context argument: asked for a version
// before 13.0 the driver serves the old variant, from 13.0 the new one, each under its exported
// name.
TEST_F(DriverTest, CtxSynchronizeVariantsByVersion) {
  void* at_12000 = cu().resolve("cuCtxSynchronize", 12000);
  ASSERT_NE(at_12000, nullptr);
  EXPECT_EQ(at_12000, dlsym(cu().library, "cuCtxSynchronize"));
  EXPECT_EQ(cu().resolve("cuCtxSynchronize", 12090), at_12000);
  EXPECT_OK(reinterpret_cast<CUresult (*)()>(at_12000)());
  void* at_13000 = cu().resolve("cuCtxSynchronize", 13000);
  ASSERT_NE(at_13000, nullptr);
  EXPECT_EQ(at_13000, dlsym(cu().library, "cuCtxSynchronize_v2"));
  CUcontext context = nullptr;
  ASSERT_OK(cu().cuCtxGetCurrent(&context));
  EXPECT_OK(reinterpret_cast<CUresult (*)(CUcontext)>(at_13000)(context));
  EXPECT_OK(reinterpret_cast<CUresult (*)(CUcontext)>(at_13000)(nullptr));
  auto get_device =
      reinterpret_cast<CUresult (*)(CUdevice*, CUcontext)>(cu().resolve("cuCtxGetDevice", 13000));
  ASSERT_NE(get_device, nullptr);
  CUdevice device = -1;
  EXPECT_OK(get_device(&device, context));
  EXPECT_EQ(device, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, get_device(nullptr, context));
}

TEST_F(DriverTest, ExportsTheCuda113GetProcAddress) {
  using Legacy = CUresult (*)(const char*, void**, int, cuuint64_t);
  auto legacy = reinterpret_cast<Legacy>(dlsym(cu().library, "cuGetProcAddress"));
  ASSERT_NE(legacy, nullptr);
  void* function = nullptr;
  EXPECT_OK(legacy("cuInit", &function, 11030, 0));
  EXPECT_EQ(function, reinterpret_cast<void*>(cu().cuInit));
  EXPECT_EQ(cu().resolve("cuGetProcAddress", 12000), dlsym(cu().library, "cuGetProcAddress_v2"));
  EXPECT_EQ(cu().resolve("cuGetProcAddress", 11030), reinterpret_cast<void*>(legacy));
}

// Every line of hal's CUDA backend table, required and optional, at its pinned version, and
// the error log that carries kernel faults to it.
TEST_F(DriverTest, ResolvesEveryEntryPointHalUses) {
  size_t count = 0;
  const hal::cuda::EntryPointInfo* entries = hal::cuda::entry_points(&count);
  ASSERT_GT(count, 0u);
  for (size_t i = 0; i < count; ++i) {
    CUresult result = CUDA_SUCCESS;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    EXPECT_NE(cu().resolve(entries[i].name, entries[i].version, &result, &status), nullptr)
        << entries[i].name << " at " << entries[i].version << ": " << name_of(result) << ", status "
        << status;
  }
  for (const char* name : {"cuLogsRegisterCallback", "cuLogsUnregisterCallback", "cuLogsCurrent",
                           "cuLogsDumpToFile", "cuLogsDumpToMemory"}) {
    EXPECT_NE(cu().resolve(name, 12090), nullptr) << name;
    EXPECT_EQ(cu().resolve(name, 12080), nullptr) << name << " is new in CUDA 12.9";
  }
}

// ===========================================================================================
// Error names
// ===========================================================================================

// Every CUresult that cuda.h defines has a name (its own) and a description.
TEST_F(DriverTest, NamesEveryCuresultOfCudaH) {
  std::ifstream header(PTX_CPU_TEST_CUDA_H);
  ASSERT_TRUE(header) << PTX_CPU_TEST_CUDA_H;
  std::stringstream text;
  text << header.rdbuf();
  const std::string all = text.str();
  const size_t begin = all.find("typedef enum cudaError_enum");
  const size_t end = all.find("} CUresult;", begin);
  ASSERT_NE(begin, std::string::npos);
  const std::string body = all.substr(begin, end - begin);
  const std::regex entry(R"((CUDA_(?:SUCCESS|ERROR_[A-Z0-9_]+))\s*=\s*(\d+))");
  int checked = 0;
  for (std::sregex_iterator it(body.begin(), body.end(), entry), last; it != last; ++it) {
    const std::string name = (*it)[1];
    const auto value = static_cast<CUresult>(std::stoi((*it)[2]));
    const char* got = nullptr;
    ASSERT_OK(cu().cuGetErrorName(value, &got));
    EXPECT_EQ(name, got);
    const char* description = nullptr;
    ASSERT_OK(cu().cuGetErrorString(value, &description));
    ASSERT_NE(description, nullptr);
    EXPECT_GT(std::strlen(description), 0u) << name;
    ++checked;
  }
  EXPECT_GT(checked, 90);
  const char* unknown = "x";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuGetErrorName(static_cast<CUresult>(12345), &unknown));
  EXPECT_EQ(unknown, nullptr);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuGetErrorString(CUDA_SUCCESS, nullptr));
}

// ===========================================================================================
// Devices
// ===========================================================================================

int attribute(CUdevice_attribute which, CUdevice device = 0) {
  int value = -12345;
  EXPECT_OK(api().cuDeviceGetAttribute(&value, which, device));
  return value;
}

TEST_F(DriverTest, OneDeviceByDefault) {
  int count = 0;
  ASSERT_OK(cu().cuDeviceGetCount(&count));
  EXPECT_EQ(count, 1);
  CUdevice device = -1;
  ASSERT_OK(cu().cuDeviceGet(&device, 0));
  EXPECT_EQ(device, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu().cuDeviceGet(&device, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu().cuDeviceGet(&device, -1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDeviceGet(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDeviceGetCount(nullptr));
}

TEST_F(DriverTest, DeviceNameUuidMemoryAndBusId) {
  char name[256] = {};
  ASSERT_OK(cu().cuDeviceGetName(name, sizeof(name), 0));
  EXPECT_STREQ(name, "CPU PTX device (hal)");
  char short_name[4] = {'x', 'x', 'x', 'x'};
  ASSERT_OK(cu().cuDeviceGetName(short_name, sizeof(short_name), 0));
  EXPECT_STREQ(short_name, "CPU");
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDeviceGetName(name, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu().cuDeviceGetName(name, sizeof(name), 7));

  CUuuid first{};
  CUuuid second{};
  ASSERT_OK(cu().cuDeviceGetUuid(&first, 0));
  ASSERT_OK(cu().cuDeviceGetUuid(&second, 0));
  EXPECT_EQ(std::memcmp(first.bytes, second.bytes, sizeof(first.bytes)), 0);
  EXPECT_EQ(std::memcmp(first.bytes, "hal-ptx-cpu-", 12), 0);

  size_t total = 0;
  ASSERT_OK(cu().cuDeviceTotalMem(&total, 0));
  const uint64_t ram = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
  EXPECT_GT(total, 0u);
  EXPECT_LE(total, ram);

  char bus[32] = {};
  ASSERT_OK(cu().cuDeviceGetPCIBusId(bus, sizeof(bus), 0));
  CUdevice found = -1;
  ASSERT_OK(cu().cuDeviceGetByPCIBusId(&found, bus));
  EXPECT_EQ(found, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDeviceGetByPCIBusId(&found, "not a bus id"));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu().cuDeviceGetByPCIBusId(&found, "0000:01:00.0"));
}

TEST_F(DriverTest, AttributesAreThoseOfAnA100LikeDevice) {
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), 8);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z), 64);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), 2147483647);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y), 65535);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z), 65535);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 48 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), 163 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY), 1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED), 0);
  const int processors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  EXPECT_GE(processors, 1);
  EXPECT_LE(processors, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  // Every attribute cuda.h defines answers; the one past them does not.
  for (int which = 1; which < CU_DEVICE_ATTRIBUTE_MAX; ++which) {
    int value = 0;
    EXPECT_OK(cu().cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(which), 0))
        << "attribute " << which;
  }
  int value = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu().cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE,
            cu().cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1));
}

// ===========================================================================================
// Contexts
// ===========================================================================================

TEST_F(DriverTest, CallsWithoutACurrentContextAreInvalidContext) {
  std::thread([&] {
    CUcontext current = primary_context();
    EXPECT_OK(cu().cuCtxGetCurrent(&current));
    EXPECT_EQ(current, nullptr);
    CUdeviceptr pointer = 0;
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuMemAlloc(&pointer, 256));
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuCtxSynchronize());
    CUstream stream = nullptr;
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuStreamCreate(&stream, 0));
    CUevent event = nullptr;
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuEventCreate(&event, 0));
    CUdevice device = -1;
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuCtxGetDevice(&device));
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuStreamSynchronize(nullptr));
    uint32_t word = 0;
    EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuMemcpyHtoD(1, &word, 4));
    // Device queries need no context.
    int count = 0;
    EXPECT_OK(cu().cuDeviceGetCount(&count));
  }).join();
}

TEST_F(DriverTest, ContextPerThreadStackAndDevice) {
  CUcontext current = nullptr;
  ASSERT_OK(cu().cuCtxGetCurrent(&current));
  EXPECT_EQ(current, primary_context());
  CUdevice device = -1;
  ASSERT_OK(cu().cuCtxGetDevice(&device));
  EXPECT_EQ(device, 0);

  ASSERT_OK(cu().cuCtxPushCurrent(primary_context()));
  CUcontext popped = nullptr;
  ASSERT_OK(cu().cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, primary_context());
  ASSERT_OK(cu().cuCtxPopCurrent(nullptr));  // the one SetUp made current
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuCtxPopCurrent(&popped));
  ASSERT_OK(cu().cuCtxGetCurrent(&current));
  EXPECT_EQ(current, nullptr);
  EXPECT_OK(cu().cuCtxSetCurrent(nullptr));  // nothing to pop: a no-op

  int garbage = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT,
            cu().cuCtxSetCurrent(reinterpret_cast<CUcontext>(&garbage)));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuCtxPushCurrent(nullptr));
  ASSERT_OK(cu().cuCtxSetCurrent(primary_context()));

  int least = 5;
  int greatest = 5;
  ASSERT_OK(cu().cuCtxGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, 0);
}

TEST_F(DriverTest, PrimaryContextStateAndFlags) {
  unsigned flags = 99;
  int active = 0;
  ASSERT_OK(cu().cuDevicePrimaryCtxGetState(0, &flags, &active));
  EXPECT_EQ(active, 1);
  CUcontext again = nullptr;
  ASSERT_OK(cu().cuDevicePrimaryCtxRetain(&again, 0));
  EXPECT_EQ(again, primary_context());
  ASSERT_OK(cu().cuDevicePrimaryCtxRelease(0));

  ASSERT_OK(cu().cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC));
  ASSERT_OK(cu().cuDevicePrimaryCtxGetState(0, &flags, &active));
  EXPECT_EQ(flags, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  unsigned current_flags = 0;
  ASSERT_OK(cu().cuCtxGetFlags(&current_flags));
  EXPECT_EQ(current_flags, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDevicePrimaryCtxSetFlags(0, 0x3));  // spin|yield
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDevicePrimaryCtxSetFlags(0, 0x1000));
  ASSERT_OK(cu().cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_AUTO));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu().cuDevicePrimaryCtxGetState(3, &flags, &active));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDevicePrimaryCtxGetState(0, nullptr, &active));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuDevicePrimaryCtxRetain(nullptr, 0));
}

// The last release destroys what was made in the context; the next retain starts afresh.
TEST_F(DriverTest, ReleasingThePrimaryContextDestroysItsObjects) {
  CUstream stream = nullptr;
  ASSERT_OK(cu().cuStreamCreate(&stream, 0));
  CUdeviceptr memory = 0;
  ASSERT_OK(cu().cuMemAlloc(&memory, 4096));
  CUevent event = nullptr;
  ASSERT_OK(cu().cuEventCreate(&event, 0));

  ASSERT_OK(cu().cuDevicePrimaryCtxRelease(0));  // the fixture's retain: now 0
  unsigned flags = 0;
  int active = 1;
  ASSERT_OK(cu().cuDevicePrimaryCtxGetState(0, &flags, &active));
  EXPECT_EQ(active, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuDevicePrimaryCtxRelease(0));
  CUdeviceptr other = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuMemAlloc(&other, 16));  // still current, but dead
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu().cuCtxSetCurrent(primary_context()));

  CUcontext context = nullptr;
  ASSERT_OK(cu().cuDevicePrimaryCtxRetain(&context, 0));
  EXPECT_EQ(context, primary_context());
  ASSERT_OK(cu().cuCtxSetCurrent(context));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuStreamSynchronize(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu().cuEventQuery(event));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu().cuMemFree(memory));
  CUdeviceptr base = 0;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cu().cuMemGetAddressRange(&base, nullptr, memory));
}

}  // namespace
}  // namespace ptx_cpu_test
