/* A program outside the hal tree: it finds hal through the installed CMake package or
 * pkg-config, loads vector_add_f32 from the installed kernel pack and checks the result.
 * usage: consumer <kernels dir>. Exit 0 when correct, 77 when there is no device taking
 * SPIR-V, 1 on any failure (with hal_last_error()). */
#include <hal/hal.h>

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    if ((call) != HAL_SUCCESS) {                                             \
      fprintf(stderr, "consumer: %s failed: %s\n", #call, hal_last_error()); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(int argc, char** argv) {
  enum { N = 1000 };
  float a[N], b[N], c[N];
  char path[4096];
  hal_device device;
  hal_device_info info;
  hal_stream stream;
  hal_module module;
  hal_function function;
  hal_deviceptr da, db, dc;
  hal_launch_config config = {{(N + 255) / 256, 1, 1}, {0, 0, 0}, 0};
  unsigned n = N;
  void* args[4];
  int i;

  if (argc != 2) {
    fprintf(stderr, "usage: consumer <kernels dir>\n");
    return 1;
  }
  if (hal_version() != HAL_VERSION) {
    fprintf(stderr, "consumer: header version %u, library %u\n", HAL_VERSION, hal_version());
    return 1;
  }
  if (hal_device_find("default", &device) != HAL_SUCCESS) {
    printf("consumer: no device (%s)\n", hal_last_error());
    return 77;
  }
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(hal_device_get_info(device, &info));
  if ((info.ir_mask & HAL_IR_SPIRV) == 0) {
    printf("consumer: %s does not take SPIR-V\n", info.name);
    return 77;
  }
  snprintf(path, sizeof path, "%s/vector_add_f32.spv", argv[1]);
  for (i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
  }
  CHECK(hal_stream_create(device, &stream));
  CHECK(hal_module_load_file(device, path, NULL, &module));
  CHECK(hal_module_get_function(module, "vector_add_f32", &function));
  CHECK(hal_mem_alloc(device, sizeof a, &da));
  CHECK(hal_mem_alloc(device, sizeof b, &db));
  CHECK(hal_mem_alloc(device, sizeof c, &dc));
  CHECK(hal_memcpy_htod(stream, da, a, sizeof a));
  CHECK(hal_memcpy_htod(stream, db, b, sizeof b));
  args[0] = &da;
  args[1] = &db;
  args[2] = &dc;
  args[3] = &n;
  CHECK(hal_launch(stream, function, &config, args));
  CHECK(hal_memcpy_dtoh(stream, c, dc, sizeof c));
  CHECK(hal_stream_synchronize(stream));
  for (i = 0; i < N; ++i) {
    if (c[i] != 1.5f * (float)i) {
      fprintf(stderr, "consumer: c[%d] = %g, expected %g\n", i, c[i], 1.5f * (float)i);
      return 1;
    }
  }
  CHECK(hal_mem_free(device, da));
  CHECK(hal_mem_free(device, db));
  CHECK(hal_mem_free(device, dc));
  CHECK(hal_module_unload(module));
  CHECK(hal_stream_destroy(stream));
  printf("consumer: %d sums correct on %s\n", N, info.name);
  return 0;
}
