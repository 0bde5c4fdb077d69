// Using what hal-tune found: for a device, a family and a problem shape, what to launch.
//
// The tuned choice comes from the device's tuning database (tuning_db.h) in default_directory()
// (HAL_CACHE_DIR/tune, else the user's cache): the entry of the shape's bucket, else of the
// nearest bucket tuned for the family (nearest in log2 of each dimension). Without one, or when
// the database is corrupt or stale (written for another device, driver, hal version or kernel
// pack), the plan is the family's default and says why: for matmul the shared-memory tiles
// BM = BN = 64, BK = 16; for attention attention_fused. A corrupt or stale database is reported
// once per process on stderr and never trusted.
//
// Thread-safety: plan_matmul and plan_attention may be called from any thread; a database file
// is read again only when it changes.
#pragma once

#include "attention_problem.h"
#include "matmul_problem.h"
#include "tuning_db.h"

#include <hal/hal.h>

#include <string>
#include <vector>

namespace hal_kernels::tune {

// The key |device|'s database is stored and checked under: its backend name and uuid, its
// driver (driver_info and api_version), hal's version and the pack's hash. False with *why
// when the device's info cannot be read.
bool device_key(hal_device device, DeviceKey* key, std::string* why);

// FNV-1a 64 over the pack's manifest and every blob, as 16 hex digits: a database written for
// other kernels is stale.
std::string pack_hash();

struct LaunchPlan {
  std::string kernel;  // the entry point (a pack kernel)
  hal_ir ir = HAL_IR_SPIRV;
  const void* blob = nullptr;  // the pack's, static
  size_t blob_size = 0;
  std::vector<Specialization> specializations;  // 32-bit each; for hal_module_options
  uint32_t block[3] = {1, 1, 1};
  uint32_t grid[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory every launch passes (hal_kernel_info's)
  bool tuned = false;
  std::string label;   // the variant, e.g. "tiled BM=64 BN=128 BK=16"
  std::string source;  // where the choice came from, one sentence
};

// What to launch for C = A * B (M x N x K) of |family| on |device|, from the database in
// |directory| (nullptr: default_directory()). False with *why for a family that is not one of
// MatmulProblem::families(), or a device the pack has no kernel for.
bool plan_matmul(hal_device device, const std::string& family, MatmulShape shape, LaunchPlan* out,
                 std::string* why, const std::string* directory = nullptr);

// What to launch for fused attention at |shape| (its head dim one of
// AttentionProblem::head_dims()) of |family| on |device|, as plan_matmul. The launch's arguments
// are the pack's attention_fused parameter list. False with *why for a family that is not one of
// AttentionProblem::families(), another head dim, or a device the pack has no kernel for.
bool plan_attention(hal_device device, const std::string& family, const AttentionShape& shape,
                    LaunchPlan* out, std::string* why, const std::string* directory = nullptr);

// Loads |plan|'s module on |device| with its specializations (the caller unloads it).
hal_status load_plan(hal_device device, const LaunchPlan& plan, hal_module* module,
                     hal_function* function);

}  // namespace hal_kernels::tune
