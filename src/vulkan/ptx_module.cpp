#include "vulkan/ptx_module.h"

#include "common/error.h"
#include "common/log.h"
#include "common/ptx_params.h"
#include "ptx/ir.h"
#include "ptx/reader.h"
#include "vulkan/device.h"
#include "vulkan/module.h"
#include "vulkan/pipeline_cache.h"
#include "vulkan/ptx_cache.h"
#include "vulkan/spirv_reflect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hal::vulkan {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;
// The newest architecture PTX ISA 9.0 names (sm_121); a .target beyond it is refused as on a GPU
// of that architecture.
constexpr uint32_t kNewestPtxTarget = 121;
// Said after every translation refusal.
constexpr const char* kWhyRefused =
    "a Vulkan device runs PTX translated to SPIR-V, and this cannot be; a CUDA device runs it "
    "as it is";

// A translation that breaks the contract of translate.h: from the translator, hal's own bug
// (load_ptx_module() says so); from the cache, a file to replace.
hal_status translator_bug(std::string_view what) {
  return hal::failf(HAL_ERROR_INTERNAL, "the PTX-to-SPIR-V translation is wrong: {}", what);
}

const ptx_spirv::KernelInfo* find_kernel(const ptx_spirv::Translation& translation,
                                         const std::string& name) {
  for (const ptx_spirv::KernelInfo& info : translation.kernels) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const ptx_spirv::RefusedKernel* find_refused(const ptx_spirv::Translation& translation,
                                             const std::string& name) {
  for (const ptx_spirv::RefusedKernel& refused : translation.refused) {
    if (refused.name == name) return &refused;
  }
  return nullptr;
}

const ReflectedEntryPoint* find_entry(const ReflectedModule& module, const std::string& name) {
  for (const ReflectedEntryPoint& entry : module.entry_points) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// The plan of PTX kernel |entry| from its signature and what the translator says of it, after
// checking that the SPIR-V entry point |reflected| is what translate.h promises.
hal_status plan_ptx_function(const VulkanDevice& device, const ptx::Entry& entry,
                             const ptx_spirv::KernelInfo& info,
                             const ReflectedEntryPoint& reflected, FunctionPlan* plan) {
  if (info.param_offsets.size() != entry.params.size()) {
    return translator_bug(fmt::format("kernel '{}' has {} parameters, the translation places {}",
                                      entry.name, entry.params.size(), info.param_offsets.size()));
  }
  if (!reflected.bindings.empty()) {
    return translator_bug(fmt::format("kernel '{}' uses descriptors", entry.name));
  }
  if (!reflected.block_declared) {
    return translator_bug(fmt::format("kernel '{}' declares no workgroup size", entry.name));
  }
  // The signature's .reqntid, as on CUDA, which the translation must have kept.
  const bool fixed = entry.reqntid[0] != 0;
  for (int d = 0; d < 3; ++d) {
    const bool as_promised =
        info.reqntid[d] == entry.reqntid[d] &&
        (fixed ? reflected.block_spec_id[d] == kNoSpecId && reflected.block[d] == entry.reqntid[d]
               : reflected.block_spec_id[d] == ptx_spirv::kBlockSpecIds[d]);
    if (!as_promised) {
      return translator_bug(
          fmt::format("kernel '{}' does not take its block size as translate.h says", entry.name));
    }
  }
  FunctionDesc& desc = plan->desc;
  desc.name = entry.name;
  desc.params = ptx_param_infos(entry);
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const uint64_t end = uint64_t{info.param_offsets[i]} + entry.params[i].size;
    if (end > info.param_bytes) {
      return translator_bug(fmt::format("kernel '{}' parameter {} lies outside its {} bytes",
                                        entry.name, i, info.param_bytes));
    }
    ParamSlot slot;
    slot.push = true;
    slot.offset = info.param_offsets[i];
    slot.size = entry.params[i].size;
    plan->slots.push_back(slot);
  }
  // vkCmdPushConstants writes whole 32-bit words.
  const uint32_t param_words_bytes = (info.param_bytes + 3u) & ~3u;
  plan->push_size = param_words_bytes;
  if (info.params_in_buffer) {
    // The arguments go to a block in memory; its address is what is pushed.
    plan->param_block_bytes = param_words_bytes;
    plan->push_size = 8;
  }
  const uint32_t push_limit = device.caps().limits.maxPushConstantsSize;
  if (plan->push_size > push_limit) {
    return translator_bug(fmt::format("kernel '{}' pushes {} bytes; the device allows {}",
                                      entry.name, plan->push_size, push_limit));
  }
  if (reflected.push_constant_size > plan->push_size) {
    return translator_bug(
        fmt::format("kernel '{}' reads {} bytes of push constants, beyond its "
                    "{} bytes of parameters",
                    entry.name, reflected.push_constant_size, info.param_bytes));
  }
  if (info.warp_size != 0 && info.warp_size != ptx_spirv::kWarpSize) {
    return translator_bug(
        fmt::format("kernel '{}' has warps of {} lanes", entry.name, info.warp_size));
  }
  plan->warp_size = info.warp_size;
  desc.max_threads_per_block = entry.maxntid;
  desc.static_shared_bytes = info.static_shared_bytes;
  // As on CUDA, any launch may pass dynamic shared memory, 0 included; a kernel without
  // .extern .shared ignores it.
  desc.dynamic_shared = true;
  desc.shared_bytes_required = false;
  plan->shared_bytes_constant = info.dynamic_shared;
  plan->shared_bytes_constant_id = ptx_spirv::kSharedBytesSpecId;
  return HAL_SUCCESS;
}

// How a translation came: fresh from the translator, which the validator checks, or read from
// the cache, where this build wrote it after validating it (ptx_cache.h).
enum class Source { kTranslated, kCached };

// Loads |translation| of the PTX whose signatures are |signatures|. Every way in which the
// translation breaks translate.h's contract is HAL_ERROR_INTERNAL (translator_bug); the other
// failures are the device's (a missing feature, the driver's own errors).
hal_status instantiate(VulkanDevice& device, const ptx::Module& signatures,
                       const ptx_spirv::Translation& translation, Source source,
                       std::unique_ptr<hal::Module>* out) {
  const std::vector<uint32_t>& words = translation.words;
  if (words.size() < 5 || words[0] != kSpirvMagic) {
    return translator_bug("it is not a SPIR-V module");
  }
  std::string message;
  if (source == Source::kTranslated && !validate_spirv(device, words, &message)) {
    return translator_bug(fmt::format("SPIR-V validation for {} failed: {}",
                                      spvTargetEnvDescription(device.caps().spirv_env), message));
  }
  if (signatures.entries.size() != translation.kernels.size() + translation.refused.size()) {
    return translator_bug(fmt::format("the PTX has {} kernels, the translation {} and {} refused",
                                      signatures.entries.size(), translation.kernels.size(),
                                      translation.refused.size()));
  }
  ReflectOptions reflect_options;
  for (const ptx_spirv::KernelInfo& info : translation.kernels) {
    // Each launch sets the dynamic shared memory: reflection must not size it at its default.
    if (info.dynamic_shared) reflect_options.launch_spec_id = ptx_spirv::kSharedBytesSpecId;
  }
  ReflectedModule reflected;
  std::string error;
  if (!reflect_spirv(words.data(), words.size(), reflect_options, &reflected, &error)) {
    return translator_bug(fmt::format("SPIR-V reflection failed: {}", error));
  }

  // Everything is checked before the driver sees the module.
  std::vector<FunctionPlan> plans;
  std::vector<size_t> entry_index;  // of each plan, in reflected.entry_points
  std::vector<std::unique_ptr<hal::Function>> refused;
  for (const ptx::Entry& entry : signatures.entries) {
    if (const ptx_spirv::RefusedKernel* r = find_refused(translation, entry.name)) {
      if (find_kernel(translation, entry.name) != nullptr || r->reason.empty()) {
        return translator_bug(fmt::format("kernel '{}' is refused wrongly", entry.name));
      }
      // Never launched: the core hands out no handle to an unavailable entry point.
      auto function = std::make_unique<hal::Function>();
      function->desc.name = entry.name;
      function->desc.params = ptx_param_infos(entry);
      function->desc.unavailable = fmt::format("{} ({})", r->reason, kWhyRefused);
      refused.push_back(std::move(function));
      continue;
    }
    const ptx_spirv::KernelInfo* info = find_kernel(translation, entry.name);
    const ReflectedEntryPoint* reflected_entry = find_entry(reflected, entry.name);
    if (info == nullptr || reflected_entry == nullptr) {
      return translator_bug(fmt::format("kernel '{}' is missing", entry.name));
    }
    FunctionPlan& plan = plans.emplace_back();
    hal_status status = plan_ptx_function(device, entry, *info, *reflected_entry, &plan);
    if (status != HAL_SUCCESS) return status;
    entry_index.push_back(static_cast<size_t>(reflected_entry - reflected.entry_points.data()));
  }

  PreparedShader shader;
  hal_status status = create_shader(device, std::move(reflected), words, {}, &shader);
  if (status != HAL_SUCCESS) return status;
  auto module = std::make_unique<VulkanModule>(device);
  for (size_t i = 0; i < plans.size(); ++i) {
    std::unique_ptr<VulkanFunction> function;
    status = create_function(device, shader.reflected.entry_points[entry_index[i]],
                             std::move(plans[i]), shader, &function);
    if (status != HAL_SUCCESS) return status;
    module->functions.push_back(std::move(function));
  }
  for (std::unique_ptr<hal::Function>& function : refused) {
    module->functions.push_back(std::move(function));
  }
  *out = std::move(module);
  return HAL_SUCCESS;
}

// The warp probe: 64 threads in two warps, each writing the lanes running with it (activemask)
// at its place in the block. Lanes in a subgroup of fewer than 32 invocations see a partial
// mask, and, numbered from their subgroups as if they were 32-lane warps, some share a place
// while other places are never written.
constexpr const char* kWarpProbe = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry warp_probe(.param .u64 out) .reqntid 64, 1, 1
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  activemask.b32 %r1;
  mov.u32 %r2, %tid.x;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)";
constexpr uint32_t kProbeThreads = 64;

// Runs the warp probe on |device| as if it had 32-lane warps. Empty when it does; otherwise why
// not (a driver failure included: warp kernels are refused then too).
std::string measure_warps(VulkanDevice& device, ptx_spirv::Target target) {
  target.warp32 = true;
  target.no_warp32.clear();
  const std::string_view text(kWarpProbe);
  ptx::Module signatures;
  ptx::ir::Module module;
  ptx::ir::ParseError parse_error;
  ptx::ir::ParseOptions parse_options;
  parse_options.bodies = true;
  std::string error;
  ptx_spirv::Translation translation;
  ptx_spirv::Failure failure;
  if (!ptx::parse(text, &signatures, &error) ||
      !ptx::ir::parse(text.data(), text.size(), parse_options, &module, &parse_error) ||
      !ptx_spirv::translate(module, target, &translation, &failure) ||
      translation.kernels.size() != 1) {
    return "hal's warp probe does not translate (a bug in hal): " + error + parse_error.message +
           failure.message;
  }
  std::unique_ptr<hal::Module> probe;
  std::unique_ptr<hal::Stream> stream;
  Allocation alloc;
  std::vector<uint32_t> seen(kProbeThreads, 0);
  hal_status status = instantiate(device, signatures, translation, Source::kTranslated, &probe);
  if (status == HAL_SUCCESS) status = device.create_stream(&stream);
  if (status == HAL_SUCCESS) status = device.mem_alloc(seen.size() * 4, &alloc);
  if (status == HAL_SUCCESS) {
    const DeviceRange range{alloc, 0};
    const hal_driver_range pointer{{alloc.base, alloc.size, alloc.backend_data}, 0};
    hal_deviceptr address = alloc.base;
    void* args[] = {&address};
    LaunchParams launch{};
    launch.grid[0] = launch.grid[1] = launch.grid[2] = 1;
    launch.block[0] = kProbeThreads;
    launch.block[1] = launch.block[2] = 1;
    launch.param_count = 1;
    launch.args = args;
    launch.pointers = &pointer;
    status = stream->copy_htod(range, seen.data(), seen.size() * 4, nullptr);
    if (status == HAL_SUCCESS) status = stream->launch(*probe->functions.front(), launch);
    if (status == HAL_SUCCESS) {
      status = stream->copy_dtoh(seen.data(), range, seen.size() * 4, nullptr);
    }
    if (status == HAL_SUCCESS) status = stream->synchronize();
  }
  const std::string failed = status == HAL_SUCCESS ? "" : hal::pending_error();
  hal::clear_pending_error();
  if (stream != nullptr) stream->synchronize();  // a stream is destroyed idle
  hal::clear_pending_error();
  stream.reset();
  if (alloc.base != 0) device.mem_free(alloc);
  if (status != HAL_SUCCESS) {
    return "running hal's warp probe with 32-lane subgroups failed (" + failed + ")";
  }
  // A lane never written shares its place with a lane of another subgroup.
  uint32_t widest = 0;
  bool full = true;
  for (uint32_t mask : seen) {
    widest = std::max<uint32_t>(widest, static_cast<uint32_t>(__builtin_popcount(mask)));
    full = full && mask == 0xFFFFFFFFu;
  }
  if (full) return {};
  return fmt::format(
      "the driver reports 32-lane subgroups but runs fewer: a pipeline that requires full "
      "32-lane subgroups ran {} lanes in one (measured by hal's warp probe)",
      widest);
}

// Why a device with |caps| cannot run warp-level PTX (32-lane subgroups, all full, with the
// operations the translator uses), for the refusal; empty when it can.
std::string why_no_warp32(const DeviceCaps& caps) {
  constexpr uint32_t warp = ptx_spirv::kWarpSize;
  if (caps.max_subgroup_size == 0) {
    return fmt::format(
        "the device cannot fix a compute pipeline's subgroup size (no subgroupSizeControl for "
        "compute shaders); its subgroups are {} lanes wide",
        caps.subgroup_size);
  }
  if (caps.min_subgroup_size > warp || caps.max_subgroup_size < warp) {
    return caps.min_subgroup_size == caps.max_subgroup_size
               ? fmt::format("the device's subgroups are {} lanes wide", caps.min_subgroup_size)
               : fmt::format("the device's subgroups are {} to {} lanes wide",
                             caps.min_subgroup_size, caps.max_subgroup_size);
  }
  if (!caps.compute_full_subgroups) {
    return "the device cannot promise full subgroups (no computeFullSubgroups)";
  }
  if (!caps.subgroup_ballot || !caps.subgroup_vote || !caps.subgroup_shuffle ||
      !caps.subgroup_arithmetic) {
    return "the device lacks subgroup ballot, vote, shuffle or arithmetic operations in compute "
           "shaders";
  }
  return {};
}

}  // namespace

bool runs_ptx(const DeviceCaps& caps) {
  return caps.buffer_device_address && caps.shader_int64;
}

ptx_spirv::Target ptx_target(const DeviceCaps& caps) {
  ptx_spirv::Target target;
  target.float64 = caps.shader_float64;
  target.int16 = caps.shader_int16;
  target.int8 = caps.shader_int8;
  target.float16 = caps.shader_float16;
  target.storage_buffer_8bit = caps.storage_buffer_8bit;
  target.storage_buffer_16bit = caps.storage_buffer_16bit;
  target.int64_atomics = caps.int64_atomics_everywhere;
  target.float32_atomic_add = caps.atomic_float32_add_everywhere;
  target.max_push_constant_bytes = caps.limits.maxPushConstantsSize;
  target.max_shared_bytes = caps.limits.maxComputeSharedMemorySize;
  target.no_warp32 = why_no_warp32(caps);
  target.warp32 = target.no_warp32.empty();
  return target;
}

hal_status load_ptx_module(VulkanDevice& device, const uint8_t* blob, size_t size,
                           const ModuleOptions& options, std::unique_ptr<hal::Module>* out) {
  if (!options.specializations.empty() || options.shared_bytes_constant) {
    return hal::fail(HAL_ERROR_NOT_SUPPORTED,
                     "PTX has no specialization constants; they apply to SPIR-V only");
  }
  const DeviceCaps& caps = device.caps();
  if (!runs_ptx(caps)) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "'{}' cannot run PTX: it has no {} (PTX on Vulkan needs "
                      "bufferDeviceAddress and shaderInt64). Load SPIR-V, or pick a device that "
                      "lists HAL_IR_PTX in ir_mask",
                      device.info.name,
                      caps.buffer_device_address ? "shaderInt64" : "bufferDeviceAddress");
  }
  // NVIDIA's driver reads PTX up to its first NUL; so does hal, on every device.
  if (const void* nul = std::memchr(blob, 0, size); nul != nullptr) {
    size = static_cast<size_t>(static_cast<const uint8_t*>(nul) - blob);
  }
  const std::string_view text(reinterpret_cast<const char*>(blob), size);
  ptx::Module signatures;
  std::string error;
  if (!ptx::parse(text, &signatures, &error)) {
    return hal::failf(HAL_ERROR_INVALID_IR, "PTX {}", error);  // "PTX line N: ..."
  }
  // A Vulkan device is no particular NVIDIA architecture: it takes PTX for any architecture
  // the PTX ISA names, but not arch-specific PTX (sm_90a, sm_100f), which may use instructions
  // of that one architecture and runs only on it.
  const char suffix = signatures.target.empty() ? '\0' : signatures.target.back();
  if (signatures.target_sm > kNewestPtxTarget) {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "the PTX targets {}, newer than any architecture hal translates PTX for on "
                      "Vulkan devices (sm_{} and older). Compile for sm_{} or lower",
                      signatures.target, kNewestPtxTarget, kNewestPtxTarget);
  }
  if (suffix == 'a' || suffix == 'f') {
    return hal::failf(HAL_ERROR_NOT_SUPPORTED,
                      "the PTX targets {}, code for GPUs of compute capability {}.{} only; a "
                      "Vulkan device runs PTX translated to SPIR-V. Compile for sm_{} without "
                      "the '{}' suffix",
                      signatures.target, signatures.target_sm / 10, signatures.target_sm % 10,
                      signatures.target_sm, suffix);
  }
  if (signatures.address_size != 64) {
    return hal::fail(HAL_ERROR_NOT_SUPPORTED,
                     "the PTX uses 32-bit addresses (.address_size 32 or none); hal runs only "
                     "64-bit PTX: add .address_size 64");
  }

  ptx_spirv::Target target = ptx_target(caps);
  if (target.warp32) {
    // What the driver reports is measured once before any warp kernel runs on it.
    target.no_warp32 = device.warp_measurement([&] { return measure_warps(device, target); });
    target.warp32 = target.no_warp32.empty();
  }
  const std::string cache_path = ptx_cache_path(PipelineCache::default_dir(), text, target);
  ptx_spirv::Translation translation;
  std::string why;
  if (!cache_path.empty() && read_ptx_cache(cache_path, text, target, &translation, &why)) {
    const hal_status status = instantiate(device, signatures, translation, Source::kCached, out);
    if (status != HAL_ERROR_INTERNAL) {
      if (status == HAL_SUCCESS) {
        hal::log()->debug("vulkan: PTX translation read from {}", cache_path);
      }
      return status;
    }
    // A file that passes its checksum but does not fit the PTX (its kernels, its reflection) is
    // replaced.
    hal::log()->warn("vulkan: ignoring the PTX translation cached in {} (translating again): {}",
                     cache_path, hal::pending_error());
    hal::clear_pending_error();
  } else if (!cache_path.empty()) {
    hal::log()->debug("vulkan: no cached PTX translation in {}: {}", cache_path, why);
  }

  ptx::ir::Module module;
  ptx::ir::ParseError parse_error;
  ptx::ir::ParseOptions parse_options;
  parse_options.bodies = true;
  if (!ptx::ir::parse(text.data(), text.size(), parse_options, &module, &parse_error)) {
    return hal::failf(HAL_ERROR_INVALID_IR, "PTX line {}: {}", parse_error.line,
                      parse_error.message);
  }
  translation = ptx_spirv::Translation{};
  ptx_spirv::Failure failure;
  if (!ptx_spirv::translate(module, target, &translation, &failure)) {
    if (failure.kind == ptx_spirv::Failure::Kind::kInvalid) {
      return hal::failf(HAL_ERROR_INVALID_IR, "malformed PTX: {}", failure.message);
    }
    return hal::failf(HAL_ERROR_NOT_SUPPORTED, "{} ({})", failure.message, kWhyRefused);
  }
  const hal_status status = instantiate(device, signatures, translation, Source::kTranslated, out);
  if (status == HAL_ERROR_INTERNAL) {
    return hal::fail(
        status, hal::pending_error() + ". This is a bug in hal; please report it with the PTX");
  }
  if (status == HAL_SUCCESS) {
    hal::log()->debug("vulkan: translated PTX with {} kernel(s) to {} SPIR-V words",
                      translation.kernels.size(), translation.words.size());
    if (!cache_path.empty()) write_ptx_cache(cache_path, text, target, translation);
  }
  return status;
}

}  // namespace hal::vulkan
