/* A small, fixed workload for the timeline-trace test: two streams on one device, with copies,
 * fills and kernels on both and a cross-stream wait through an event. The test runs it with
 * HAL_TRACE set and checks the file (check_trace.py); this program only does the work, checks
 * the result (unless --no-check: a test double moves bytes but runs no kernels) and releases
 * everything.
 *
 *   trace_workload <device selector> [--no-check]
 *
 * On stream 1: A and B uploaded, C = A + B, D = C (device to device), C filled with 0, event.
 * On stream 2: waits for the event, C = A + D, C downloaded. So C = 2A + B. */
#include <hal/hal.h>
#include <hal_kernels/hal_kernels.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096u

#define CHECK(call)                                                                \
  do {                                                                             \
    hal_status status_ = (call);                                                   \
    if (status_ != HAL_SUCCESS) {                                                  \
      fprintf(stderr, "trace_workload: %s failed: %s\n", #call, hal_last_error()); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static void launch_add(hal_stream stream, hal_function add, hal_deviceptr a, hal_deviceptr b,
                       hal_deviceptr c) {
  uint32_t n = N;
  void* args[] = {&a, &b, &c, &n};
  hal_launch_config config;
  memset(&config, 0, sizeof(config));
  config.grid[0] = N / 256;
  config.grid[1] = 1;
  config.grid[2] = 1;
  config.block[0] = 256;
  config.block[1] = 1;
  config.block[2] = 1;
  CHECK(hal_launch(stream, add, &config, args));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: trace_workload <device selector> [--no-check]\n");
    return 2;
  }
  const int check = !(argc > 2 && strcmp(argv[2], "--no-check") == 0);
  hal_device device;
  if (hal_device_find(argv[1], &device) == HAL_ERROR_NOT_FOUND) {
    fprintf(stderr, "trace_workload: no device '%s': %s\n", argv[1], hal_last_error());
    return 77; /* nothing to run on: the test is skipped */
  }
  hal_device_info info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  CHECK(hal_device_get_info(device, &info));
  const hal_ir ir = (info.ir_mask & HAL_IR_SPIRV) ? HAL_IR_SPIRV : HAL_IR_PTX;
  const hal_kernel_blob* blob = hal_kernels_find("vector_add_f32", ir);
  if (blob == NULL) {
    fprintf(stderr, "trace_workload: the kernel pack has no vector_add_f32 for this device\n");
    return 1;
  }
  hal_module module;
  hal_function add;
  CHECK(hal_module_load(device, blob->data, blob->size, NULL, &module));
  CHECK(hal_module_get_function(module, blob->entry_point, &add));

  static float a[N], b[N], c[N];
  for (uint32_t i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = (float)(3 * i + 1);
  }
  hal_stream s1, s2;
  hal_event done;
  hal_deviceptr da, db, dc, dd;
  CHECK(hal_stream_create(device, &s1));
  CHECK(hal_stream_create(device, &s2));
  CHECK(hal_event_create(device, &done));
  CHECK(hal_mem_alloc(device, sizeof(a), &da));
  CHECK(hal_mem_alloc(device, sizeof(b), &db));
  CHECK(hal_mem_alloc(device, sizeof(c), &dc));
  CHECK(hal_mem_alloc(device, sizeof(c), &dd));

  CHECK(hal_memcpy_htod(s1, da, a, sizeof(a)));
  CHECK(hal_memcpy_htod(s1, db, b, sizeof(b)));
  launch_add(s1, add, da, db, dc);
  CHECK(hal_memcpy_dtod(s1, dd, dc, sizeof(c)));
  CHECK(hal_memset_d32(s1, dc, 0, N));
  CHECK(hal_event_record(done, s1));

  CHECK(hal_stream_wait_event(s2, done));
  launch_add(s2, add, da, dd, dc);
  CHECK(hal_memcpy_dtoh(s2, c, dc, sizeof(c)));
  CHECK(hal_stream_synchronize(s2));

  int bad = 0;
  for (uint32_t i = 0; check && i < N; ++i) {
    if (c[i] != 2.0f * a[i] + b[i]) {
      if (bad++ < 5) fprintf(stderr, "C[%u] = %g, expected %g\n", i, c[i], 2.0f * a[i] + b[i]);
    }
  }
  CHECK(hal_mem_free(device, da));
  CHECK(hal_mem_free(device, db));
  CHECK(hal_mem_free(device, dc));
  CHECK(hal_mem_free(device, dd));
  CHECK(hal_event_destroy(done));
  CHECK(hal_stream_destroy(s2));
  CHECK(hal_stream_destroy(s1)); /* its spans reach the trace here, when it is waited for */
  CHECK(hal_module_unload(module));
  printf("trace_workload: %s on %s\n", bad ? "FAIL" : (check ? "PASS" : "done"), info.name);
  return bad ? 1 : 0;
}
