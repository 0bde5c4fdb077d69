// hal_launch: the argument list and the launch geometry are checked here, for every backend
// alike, before a driver sees anything.
#include "common/api_guard.h"
#include "common/pointer_hints.h"
#include "common/ranges.h"
#include "common/registry.h"

#include <algorithm>
#include <cstring>
#include <shared_mutex>
#include <vector>

using namespace hal;

namespace {

const char* kAxis[3] = {"x", "y", "z"};

hal_status check_geometry(const hal_device_info& info, const FunctionDesc& fn,
                          const hal_launch_config& config, hal_driver_launch* params) {
  for (int i = 0; i < 3; ++i) {
    if (config.grid[i] == 0) {
      return failf(HAL_ERROR_OUT_OF_RANGE, "grid.{} is 0; every grid dimension must be >= 1",
                   kAxis[i]);
    }
    if (info.max_grid_dim[i] != 0 && config.grid[i] > info.max_grid_dim[i]) {
      return failf(HAL_ERROR_OUT_OF_RANGE, "grid.{} = {} exceeds the device's limit {}", kAxis[i],
                   config.grid[i], info.max_grid_dim[i]);
    }
    params->grid[i] = config.grid[i];
  }
  const bool block_zero = config.block[0] == 0 && config.block[1] == 0 && config.block[2] == 0;
  const bool fixed = fn.block[0] != 0 && fn.block[1] != 0 && fn.block[2] != 0;
  if (block_zero) {
    if (!fixed) {
      const uint32_t most =
          fn.max_threads_per_block != 0 ? fn.max_threads_per_block : info.max_threads_per_block;
      return failf(HAL_ERROR_INVALID_ARGUMENT,
                   "block is {{0,0,0}} but '{}' has no fixed block size: its block is the "
                   "launch's to choose, up to {} threads (a PTX kernel has a fixed one only with "
                   ".reqntid; __launch_bounds__ is a limit). Give config.block, e.g. {{{},{},{}}}",
                   fn.name, most, fn.block[0] != 0 ? fn.block[0] : std::min<uint32_t>(most, 256),
                   std::max<uint32_t>(fn.block[1], 1), std::max<uint32_t>(fn.block[2], 1));
    }
    for (int i = 0; i < 3; ++i) params->block[i] = fn.block[i];
  } else {
    for (int i = 0; i < 3; ++i) {
      if (config.block[i] == 0) {
        return failf(HAL_ERROR_OUT_OF_RANGE,
                     "block.{} is 0; give every block dimension (>= 1), or {{0,0,0}} for the "
                     "kernel's own size",
                     kAxis[i]);
      }
      params->block[i] = config.block[i];
    }
    if (fixed && (fn.block[0] != config.block[0] || fn.block[1] != config.block[1] ||
                  fn.block[2] != config.block[2])) {
      return failf(HAL_ERROR_OUT_OF_RANGE,
                   "block {{{},{},{}}} differs from the fixed block size {{{},{},{}}} that '{}' "
                   "declares; pass that size or {{0,0,0}}",
                   config.block[0], config.block[1], config.block[2], fn.block[0], fn.block[1],
                   fn.block[2], fn.name);
    }
    // A kernel may fix some dimensions and leave the others to the launch.
    for (int i = 0; i < 3; ++i) {
      if (fn.block[i] != 0 && config.block[i] != fn.block[i]) {
        return failf(HAL_ERROR_OUT_OF_RANGE,
                     "block.{} is {}, but '{}' fixes it at {} in its workgroup size (the other "
                     "dimensions are the launch's to choose)",
                     kAxis[i], config.block[i], fn.name, fn.block[i]);
      }
    }
  }
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (info.max_block_dim[i] != 0 && params->block[i] > info.max_block_dim[i]) {
      return failf(HAL_ERROR_OUT_OF_RANGE, "block.{} = {} exceeds the device's limit {}", kAxis[i],
                   params->block[i], info.max_block_dim[i]);
    }
    threads *= params->block[i];
  }
  const uint32_t max_threads = max_threads_per_block(fn, info);
  if (max_threads != 0 && threads > max_threads) {
    return failf(HAL_ERROR_OUT_OF_RANGE,
                 "block {{{},{},{}}} has {} threads; the limit for '{}' on this device is {}",
                 params->block[0], params->block[1], params->block[2], threads, fn.name,
                 max_threads);
  }
  if (config.shared_bytes > 0 && !fn.dynamic_shared) {
    return failf(HAL_ERROR_NOT_SUPPORTED,
                 "shared_bytes is {} but '{}' cannot size shared memory at launch (on Vulkan, "
                 "name a shared-bytes specialization constant in hal_module_options)",
                 config.shared_bytes, fn.name);
  }
  if (config.shared_bytes == 0 && fn.shared_bytes_required) {
    return failf(HAL_ERROR_INVALID_ARGUMENT,
                 "shared_bytes is 0 but '{}' sizes its shared memory from it (the module's "
                 "shared-bytes constant); give the bytes the kernel uses",
                 fn.name);
  }
  const uint64_t shared = uint64_t{fn.static_shared_bytes} + config.shared_bytes;
  // A device reporting 0 has no shared memory: any use of it is refused.
  if (shared > info.max_shared_memory_per_block) {
    return failf(HAL_ERROR_OUT_OF_RANGE,
                 "shared memory {} bytes ({} static + {} dynamic) exceeds the device's {} bytes "
                 "per block",
                 shared, fn.static_shared_bytes, config.shared_bytes,
                 info.max_shared_memory_per_block);
  }
  params->shared_bytes = config.shared_bytes;
  return HAL_SUCCESS;
}

// |pointers| is reused from launch to launch on a thread: no allocation per launch.
hal_status check_args(const DeviceObject& dev, const FunctionDesc& fn, void* const* args,
                      hal_driver_launch* params, std::vector<hal_driver_range>& pointers) {
  params->args = args;
  if (!fn.params_known || fn.params.empty()) return HAL_SUCCESS;
  HAL_REQUIRE_ARG(args != nullptr, "args is NULL but '{}' takes {} parameter(s)", fn.name,
                  fn.params.size());
  pointers.assign(fn.params.size(), hal_driver_range{});
  params->param_count = static_cast<uint32_t>(fn.params.size());
  params->pointers = pointers.data();
  for (size_t i = 0; i < fn.params.size(); ++i) {
    HAL_REQUIRE_ARG(args[i] != nullptr, "args[{}] is NULL; '{}' parameter {} needs a value", i,
                    fn.name, i);
    if (fn.params[i].kind != HAL_PARAM_POINTER) continue;
    hal_deviceptr ptr = 0;
    std::memcpy(&ptr, args[i], sizeof(ptr));
    // A null pointer reaches kernels that take raw addresses (docs/ABI.md); it has no
    // allocation, so params->pointers[i] stays empty.
    if (ptr == 0 && fn.params[i].nullable) continue;
    // The parameter's name is formatted only on failure: this loop runs on every launch. Where
    // the kernel's reach is known (a uniform block), all of it must lie in the allocation.
    if (hal_status s = resolve_range(dev, ptr, fn.params[i].min_bytes, "the value", &pointers[i]);
        s != HAL_SUCCESS) {
      const std::string hint = pointer_hint(ptr);
      return failf(s, "'{}' parameter {} (a pointer): {}{}", fn.name, i, pending_error(),
                   hint.empty() ? "" : ". " + hint);
    }
    // What this parameter needs (hal_param_info.alignment): the device's descriptor offset
    // alignment for a bound buffer, the kernel's own accesses for a raw address.
    const uint32_t alignment = fn.params[i].alignment;
    if (alignment > 1 && ptr % alignment != 0) {
      return failf(HAL_ERROR_INVALID_ARGUMENT,
                   "'{}' parameter {} (a pointer) is {:#x}, which is not a multiple of {} bytes, "
                   "the alignment this parameter needs on device {} (hal_param_info.alignment)",
                   fn.name, i, ptr, alignment, dev.label);
    }
  }
  return HAL_SUCCESS;
}

}  // namespace

extern "C" {

HAL_API hal_status hal_launch(hal_stream stream, hal_function function,
                              const hal_launch_config* config, void* const* args) {
  return guarded("hal_launch", [&]() -> hal_status {
    auto s = find_as<StreamObject>(stream, HandleKind::kStream, "stream");
    if (!s) return HAL_ERROR_INVALID_HANDLE;
    auto f = find_as<FunctionObject>(function, HandleKind::kFunction, "function");
    if (!f) return HAL_ERROR_INVALID_HANDLE;
    DeviceObject& dev = *s->device;
    if (f->module->device != &dev) {
      return failf(HAL_ERROR_INVALID_HANDLE,
                   "function '{}' was loaded on device {} but the stream is on {}",
                   f->entry->desc.name, f->module->device->label, dev.label);
    }
    HAL_REQUIRE_ARG(config != nullptr, "config is NULL");
    // No free may release an allocation between checking the arguments and the backend's use.
    std::shared_lock memory(dev.memory_mutex);
    thread_local std::vector<hal_driver_range> pointers;
    hal_driver_launch params{};
    HAL_RETURN_IF_ERROR(check_geometry(dev.info, f->entry->desc, *config, &params));
    HAL_RETURN_IF_ERROR(check_args(dev, f->entry->desc, args, &params, pointers));
    std::lock_guard lock(s->mutex);
    if (!s->impl) return fail(HAL_ERROR_INVALID_HANDLE, "the stream was destroyed");
    HAL_RETURN_IF_ERROR(check_not_lost(dev));
    return driver_status(dev, dev.driver->table.launch(s->impl, f->entry->impl, &params));
  });
}

}  // extern "C"
