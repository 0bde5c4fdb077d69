// A stand-in for the PTX interpreter (src/ptx_vm/vm.h), linked into a second build of the
// driver, libhal_ptx_cpu_fake_vm.so, so that everything the driver does around a kernel
// (module formats, functions, launch checks, parameter layout, memory snapshots, faults and
// sticky errors, statistics) is tested without depending on the interpreter.
//
// Program::load reads only what the driver needs from PTX: .version, module variables, each
// .entry's parameters, .reqntid/.maxntid and its .shared/.local/.reg declarations. A line that
// mentions fake_vm_invalid makes the load fail as malformed PTX.
//
// Executor::run records the launch (read back with hal_ptx_cpu_fake_vm_last_launch) and acts by
// the kernel's name, checking every address against the launch's MemoryMap as the interpreter
// would:
//   add_one(u64 data, u32 n)            data[i] += 1 for i < min(n, threads)
//   fill_u32(u64 data, u32 n, u32 v)    data[i] = v
//   store_at(u64 data, u64 index)       data[index] = 42 (faults when out of bounds)
//   bump_counter(u64 out)               out[0] = ++(the module's first variable, a u32)
//   sleep_ms(u32 ms)                    sleeps
//   fault_trap, fault_assert, fault_barrier, fault_misaligned, fault_illegal_instruction:
//                                       that fault
// Each thread counts 10 lane-instructions; each warp 10 warp-instructions.
#ifndef HAL_TESTS_PTX_CPU_FAKE_VM_H_
#define HAL_TESTS_PTX_CPU_FAKE_VM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hal_ptx_cpu_fake_launch {
  char kernel[128];
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
  uint32_t param_bytes;
  unsigned char params[256]; /* the first param_bytes bytes of the parameter buffer */
} hal_ptx_cpu_fake_launch;

/* Copies the last launch into |out| (when not NULL) and returns how many kernels have run. */
typedef uint64_t (*hal_ptx_cpu_fake_vm_last_launch_fn)(hal_ptx_cpu_fake_launch* out);

#ifdef __cplusplus
}
#endif

#endif  // HAL_TESTS_PTX_CPU_FAKE_VM_H_
