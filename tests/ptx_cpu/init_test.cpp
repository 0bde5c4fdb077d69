// cuInit and what comes before it, each case in a fresh child process (initialisation happens
// once per process): HAL_PTX_CPU_DEVICES, and the calls that need no initialisation.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#ifndef PTX_CPU_TEST_LIBRARY
#error "PTX_CPU_TEST_LIBRARY must name the driver library under test"
#endif

namespace {

using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

template <typename F>
F resolve(GetProc get_proc, const char* name) {
  void* function = nullptr;
  if (get_proc(name, &function, 12090, 0, nullptr) != CUDA_SUCCESS) std::_Exit(200);
  return reinterpret_cast<F>(function);
}

// Runs |body| in a child process with HAL_PTX_CPU_DEVICES set to |devices| (unset when null);
// returns its exit status, which the body chooses (a CUresult, 0..255).
int in_child(const char* devices, const std::function<int(GetProc)>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (devices != nullptr) {
      setenv("HAL_PTX_CPU_DEVICES", devices, 1);
    } else {
      unsetenv("HAL_PTX_CPU_DEVICES");
    }
    void* library = dlopen(PTX_CPU_TEST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) std::_Exit(201);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) std::_Exit(202);
    std::_Exit(body(get_proc));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

int init(GetProc get_proc) {
  return resolve<CUresult (*)(unsigned)>(get_proc, "cuInit")(0);
}

int device_count_after_init(GetProc get_proc) {
  if (const int result = init(get_proc); result != CUDA_SUCCESS) return 100 + result;
  int count = -1;
  resolve<CUresult (*)(int*)>(get_proc, "cuDeviceGetCount")(&count);
  return count;
}

TEST(PtxCpuInit, DeviceCountFromTheEnvironment) {
  EXPECT_EQ(in_child(nullptr, device_count_after_init), 1);
  EXPECT_EQ(in_child("", device_count_after_init), 1);
  EXPECT_EQ(in_child("1", device_count_after_init), 1);
  EXPECT_EQ(in_child("4", device_count_after_init), 4);
  EXPECT_EQ(in_child("16", device_count_after_init), 16);
}

TEST(PtxCpuInit, BadDeviceCountsFailInit) {
  EXPECT_EQ(in_child("0", init), CUDA_ERROR_NO_DEVICE);
  for (const char* bad : {"17", "-1", "two", "3 ", "99999999999999999999"}) {
    EXPECT_EQ(in_child(bad, init), CUDA_ERROR_INVALID_VALUE) << bad;
  }
  // The failure is the answer to every later cuInit, and its reason is in the driver log.
  EXPECT_EQ(in_child("x",
                     [](GetProc get_proc) {
                       init(get_proc);
                       if (init(get_proc) != CUDA_ERROR_INVALID_VALUE) return 1;
                       char buffer[1024] = {};
                       size_t size = sizeof(buffer);
                       resolve<CUresult (*)(CUlogIterator*, char*, size_t*, unsigned)>(
                           get_proc, "cuLogsDumpToMemory")(nullptr, buffer, &size, 0);
                       return std::strstr(buffer, "HAL_PTX_CPU_DEVICES='x'") != nullptr ? 0 : 2;
                     }),
            0);
}

// CUDA_LOG_FILE names a file that receives every message of the driver log as well.
TEST(PtxCpuInit, LogFileFromTheEnvironment) {
  char path[] = "/tmp/ptx_cpu_log_file_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(in_child("17",
                     [&](GetProc get_proc) {
                       setenv("CUDA_LOG_FILE", path, 1);
                       return init(get_proc);
                     }),
            CUDA_ERROR_INVALID_VALUE);
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::remove(path);
  EXPECT_NE(text.str().find("cuInit: CUDA_ERROR_INVALID_VALUE: HAL_PTX_CPU_DEVICES='17'"),
            std::string::npos)
      << text.str();
}

TEST(PtxCpuInit, CallsBeforeInit) {
  EXPECT_EQ(
      in_child(nullptr,
               [](GetProc get_proc) {
                 int count = 0;
                 if (resolve<CUresult (*)(int*)>(get_proc, "cuDeviceGetCount")(&count) !=
                     CUDA_ERROR_NOT_INITIALIZED) {
                   return 1;
                 }
                 CUdeviceptr pointer = 0;
                 if (resolve<CUresult (*)(CUdeviceptr*, size_t)>(get_proc, "cuMemAlloc")(
                         &pointer, 16) != CUDA_ERROR_NOT_INITIALIZED) {
                   return 2;
                 }
                 // These need no initialisation.
                 int version = 0;
                 const char* name = nullptr;
                 if (resolve<CUresult (*)(int*)>(get_proc, "cuDriverGetVersion")(&version) !=
                         CUDA_SUCCESS ||
                     version != 13000) {
                   return 3;
                 }
                 if (resolve<CUresult (*)(CUresult, const char**)>(get_proc, "cuGetErrorName")(
                         CUDA_ERROR_NOT_INITIALIZED, &name) != CUDA_SUCCESS ||
                     std::strcmp(name, "CUDA_ERROR_NOT_INITIALIZED") != 0) {
                   return 4;
                 }
                 if (resolve<CUresult (*)(unsigned)>(get_proc, "cuInit")(1) !=
                     CUDA_ERROR_INVALID_VALUE) {
                   return 5;
                 }
                 return init(get_proc);
               }),
      0);
}

}  // namespace
