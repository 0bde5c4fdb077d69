/*
 * skeleton_checks: what the conformance suite cannot see of the skeleton driver
 * (samples/driver_skeleton), through libhal's public C API only: the device names its backend
 * "skeleton" and takes built-in kernels only; a kernel name the driver does not have is refused
 * with the names it has; a name that merely starts like one of its kernels is not taken for it;
 * a kernel that would run past its buffer faults, the fault is reported by the next synchronize
 * (and only once), nothing was written, and the device keeps working; device memory has a host
 * address.
 *
 *   skeleton_checks <selector>
 *
 * Exit status 0 when every check holds, 1 otherwise (each failed check is printed).
 */
#include <hal/hal.h>

#include <stdio.h>
#include <string.h>

static int g_failed = 0;

#define EXPECT(condition, ...)                                           \
  do {                                                                   \
    if (!(condition)) {                                                  \
      fprintf(stderr, "skeleton_checks:%d: %s: ", __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                      \
      fprintf(stderr, " (last error: %s)\n", hal_last_error());          \
      ++g_failed;                                                        \
    }                                                                    \
  } while (0)

#define CHECK(call)                                                          \
  do {                                                                       \
    const hal_status check_status_ = (call);                                 \
    if (check_status_ != HAL_SUCCESS) {                                      \
      fprintf(stderr, "skeleton_checks:%d: %s -> %s: %s\n", __LINE__, #call, \
              hal_status_string(check_status_), hal_last_error());           \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static int contains(const char* text, const char* part) {
  return strstr(text, part) != NULL;
}

/* Loads the built-in kernel named by the |size| bytes at |name|. */
static hal_status load_builtin(hal_device device, const char* name, size_t size,
                               hal_module* module) {
  char blob[128];
  memcpy(blob, "HALK", 4);
  memcpy(blob + 4, name, size);
  return hal_module_load(device, blob, 4 + size, NULL, module);
}

int main(int argc, char** argv) {
  hal_device device = NULL;
  hal_device_info info;
  hal_stream stream = NULL;
  hal_module module = NULL;
  hal_function fill = NULL;
  hal_deviceptr y = 0;
  float host[16];
  void* mapped = NULL;
  uint32_t n;
  float value = 4.5f;
  void* args[3];
  /* The skeleton's kernels take the block the launch chooses. */
  const hal_launch_config config = {{1, 1, 1}, {256, 1, 1}, 0};
  hal_status s;
  int i, wrong;

  if (argc != 2) {
    fprintf(stderr, "usage: skeleton_checks <selector>\n");
    return 2;
  }
  CHECK(hal_device_find(argv[1], &device));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(hal_device_get_info(device, &info));
  EXPECT(strcmp(info.backend_name, "skeleton") == 0 && info.backend == HAL_BACKEND_UNKNOWN,
         "the device's backend is \"%s\" (%d)", info.backend_name, (int)info.backend);
  EXPECT(info.ir_mask == HAL_IR_BUILTIN, "ir_mask is %#x", (unsigned)info.ir_mask);
  CHECK(hal_stream_create(device, &stream));

  /* A kernel the driver does not have: NOT_FOUND, naming it and listing what there is. */
  s = load_builtin(device, "matmul_naive_f32", 16, &module);
  EXPECT(s == HAL_ERROR_NOT_FOUND, "got %s", hal_status_string(s));
  EXPECT(contains(hal_last_error(), "hal_module_load"), "the message names the call");
  EXPECT(contains(hal_last_error(), "\"matmul_naive_f32\""), "the message names the kernel");
  EXPECT(contains(hal_last_error(), "fill_f32") && contains(hal_last_error(), "vector_add_f32"),
         "the message lists the kernels the driver has");
  /* The name is the blob's bytes after "HALK", all of them: fill_f32 followed by a NUL and more
   * is not fill_f32, and a name of unprintable bytes is shown safely. */
  s = load_builtin(device, "fill_f32\0x", 10, &module);
  EXPECT(s == HAL_ERROR_NOT_FOUND, "\"fill_f32\\0x\" gave %s", hal_status_string(s));
  s = load_builtin(device, "fill_f3", 7, &module);
  EXPECT(s == HAL_ERROR_NOT_FOUND, "\"fill_f3\" gave %s", hal_status_string(s));
  s = load_builtin(device, "\x01\xff\n", 3, &module);
  EXPECT(s == HAL_ERROR_NOT_FOUND && contains(hal_last_error(), "\"???\""),
         "unprintable bytes gave %s", hal_status_string(s));
  EXPECT(module == NULL, "no module on failure");

  /* fill_f32 over 16 floats, then with n = 1000: the pointer is valid where it starts, so the
   * launch is issued; the kernel would write past the allocation, so it faults. */
  CHECK(load_builtin(device, "fill_f32", 8, &module));
  CHECK(hal_module_get_function(module, "fill_f32", &fill));
  CHECK(hal_mem_alloc(device, sizeof host, &y));
  args[0] = &y;
  args[1] = &n;
  args[2] = &value;
  n = 16;
  CHECK(hal_launch(stream, fill, &config, args));
  CHECK(hal_stream_synchronize(stream));
  n = 1000;
  value = -1.0f;
  CHECK(hal_launch(stream, fill, &config, args));
  s = hal_stream_synchronize(stream);
  EXPECT(s == HAL_ERROR_LAUNCH_FAILED, "a kernel past its buffer gave %s", hal_status_string(s));
  EXPECT(contains(hal_last_error(), "fill_f32") && contains(hal_last_error(), "4000"),
         "the fault names the kernel and the bytes it needed");
  s = hal_stream_synchronize(stream);
  EXPECT(s == HAL_SUCCESS, "the fault is reported once; then %s", hal_status_string(s));
  CHECK(hal_memcpy_dtoh(stream, host, y, sizeof host));
  CHECK(hal_stream_synchronize(stream));
  for (i = 0, wrong = 0; i < 16; ++i) wrong += host[i] != 4.5f;
  EXPECT(wrong == 0, "%d of 16 floats changed by the kernel that faulted", wrong);

  /* Device memory is host memory here: hal_mem_host_pointer gives its address. */
  CHECK(hal_mem_host_pointer(device, y + 8, &mapped));
  EXPECT(mapped != NULL && ((float*)mapped)[0] == 4.5f, "the host address shows the floats");

  CHECK(hal_mem_free(device, y));
  CHECK(hal_module_unload(module));
  CHECK(hal_stream_destroy(stream));
  if (g_failed != 0) {
    fprintf(stderr, "skeleton_checks: %d check(s) failed\n", g_failed);
    return 1;
  }
  printf("skeleton_checks: every check passed\n");
  return 0;
}
