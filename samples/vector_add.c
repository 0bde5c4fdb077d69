/*
 * vector_add: hal's hello world. Finds a device, loads the kernel pack's vector_add_f32 from a
 * file (SPIR-V or PTX, whichever the device takes), adds two vectors and checks the result.
 *
 *   vector_add [--device <selector>] [--kernels <directory>] [--n <count>]
 *
 * The kernel files are looked up in --kernels, else in ../share/hal/kernels next to this program
 * (where the build and the install put them).
 */
#include <hal/hal.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                \
  do {                                                             \
    hal_status status_ = (call);                                   \
    if (status_ != HAL_SUCCESS) {                                  \
      fprintf(stderr, "%s failed: %s\n", #call, hal_last_error()); \
      return 2;                                                    \
    }                                                              \
  } while (0)

/* <directory of this program>/../share/hal/kernels, or "" when it cannot be found. */
static void default_kernel_dir(char* out, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  out[0] = '\0';
  if (n <= 0) return;
  exe[n] = '\0';
  char* slash = strrchr(exe, '/');
  if (slash == NULL) return;
  *slash = '\0';
  snprintf(out, size, "%s/../share/hal/kernels", exe);
}

int main(int argc, char** argv) {
  const char* selector = "default";
  char dir[PATH_MAX + 64];
  uint32_t n = 1000;
  default_kernel_dir(dir, sizeof dir);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--device") == 0) {
      selector = argv[i + 1];
    } else if (strcmp(argv[i], "--kernels") == 0) {
      snprintf(dir, sizeof dir, "%s", argv[i + 1]);
    } else if (strcmp(argv[i], "--n") == 0) {
      n = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    } else {
      fprintf(stderr, "usage: %s [--device <selector>] [--kernels <dir>] [--n <count>]\n", argv[0]);
      return 2;
    }
  }
  if (n == 0) n = 1;

  hal_device device;
  uint32_t count = 0;
  if (hal_device_count(&count) == HAL_SUCCESS && count == 0) {
    fprintf(stderr, "no device: hal found none (hal-info says why)\n");
    return 77; /* a skip for ctest */
  }
  CHECK(hal_device_find(selector, &device));
  hal_device_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(hal_device_get_info(device, &info));

  /* SPIR-V has one file per kernel; the PTX of the smoke kernels is one file. */
  char path[PATH_MAX + 128];
  if (info.ir_mask & HAL_IR_PTX) {
    snprintf(path, sizeof path, "%s/smoke.ptx", dir);
  } else {
    snprintf(path, sizeof path, "%s/vector_add_f32.spv", dir);
  }
  printf("device: %s\nkernel file: %s\n", info.name, path);

  hal_stream stream;
  hal_module module;
  hal_function function;
  CHECK(hal_stream_create(device, &stream));
  CHECK(hal_module_load_file(device, path, NULL, &module));
  CHECK(hal_module_get_function(module, "vector_add_f32", &function));

  float* a = malloc(n * sizeof(float));
  float* b = malloc(n * sizeof(float));
  float* c = malloc(n * sizeof(float));
  if (!a || !b || !c) return 2;
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
  }
  hal_deviceptr da, db, dc;
  CHECK(hal_mem_alloc(device, n * sizeof(float), &da));
  CHECK(hal_mem_alloc(device, n * sizeof(float), &db));
  CHECK(hal_mem_alloc(device, n * sizeof(float), &dc));
  CHECK(hal_memcpy_htod(stream, da, a, n * sizeof(float)));
  CHECK(hal_memcpy_htod(stream, db, b, n * sizeof(float)));

  /* vector_add_f32(A, B, C, n): one argument pointer per parameter, pointers first. */
  void* args[] = {&da, &db, &dc, &n};
  hal_launch_config config = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0};
  CHECK(hal_launch(stream, function, &config, args));
  CHECK(hal_memcpy_dtoh(stream, c, dc, n * sizeof(float)));
  CHECK(hal_stream_synchronize(stream));

  uint32_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (c[i] != a[i] + b[i]) ++wrong;
  }
  printf("%u of %u sums correct\n", n - wrong, n);

  CHECK(hal_mem_free(device, da));
  CHECK(hal_mem_free(device, db));
  CHECK(hal_mem_free(device, dc));
  CHECK(hal_module_unload(module));
  CHECK(hal_stream_destroy(stream));
  free(a);
  free(b);
  free(c);
  return wrong == 0 ? 0 : 1;
}
