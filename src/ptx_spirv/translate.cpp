#include "ptx_spirv/translate.h"

#include "ptx_spirv/builder.h"
#include "ptx_spirv/inline.h"
#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

// Bounds on what one module may ask of the translator, so hostile input cannot make it emit
// without limit: kernels per module and instructions per kernel.
constexpr size_t kMaxKernels = 4096;
constexpr size_t kMaxInstructions = 1u << 20;

}  // namespace

bool translate(const ir::Module& module, const Target& target, Translation* out, Failure* failure) {
  *out = Translation{};
  if (module.address_size != 64) {
    failure->kind = Failure::Kind::kNotSupported;
    failure->message = "the PTX is 32-bit (.address_size " + std::to_string(module.address_size) +
                       "); only 64-bit PTX translates";
    return false;
  }
  Builder builder;
  builder.capability(spv::Capability::Shader);
  builder.capability(spv::Capability::Int64);
  builder.capability(spv::Capability::PhysicalStorageBufferAddresses);
  ModuleState state;
  size_t kernels = 0;
  size_t fixed = 0, free = 0;
  for (const ir::Function& function : module.functions) {
    if (!function.is_entry || !function.has_body) continue;
    (function.reqntid[0] != 0 ? fixed : free) += 1;
  }
  if (fixed > 0 && free > 0) {
    // The launch-decided block is a WorkgroupSize built-in, which SPIR-V allows once per module
    // and which overrides every entry point's own size.
    failure->kind = Failure::Kind::kNotSupported;
    failure->message =
        "the module mixes kernels with .reqntid and kernels without it; load "
        "them as separate modules";
    return false;
  }
  for (const ir::Function& function : module.functions) {
    if (!function.is_entry || !function.has_body) continue;
    if (++kernels > kMaxKernels) {
      failure->kind = Failure::Kind::kNotSupported;
      failure->message = "the module has more than " + std::to_string(kMaxKernels) + " kernels";
      return false;
    }
    // A kernel refused halfway has emitted types, constants and part of a function: all of it
    // is undone, so the module holds only whole kernels.
    Builder saved_builder = builder.checkpoint();
    const ModuleState saved_state = state;
    try {
      if (function.code.size() > kMaxInstructions) {
        throw Refusal{Failure::Kind::kNotSupported,
                      "kernel '" + function.name + "' has more than " +
                          std::to_string(kMaxInstructions) + " instructions"};
      }
      KernelInfo info;
      ir::Function inlined;
      const bool calls = has_calls(function);
      if (calls) inline_calls(module, function, &inlined);
      Kernel kernel(builder, state, module, calls ? inlined : function, target);
      kernel.translate(&info);
      out->kernels.push_back(std::move(info));
    } catch (const Refusal& refusal) {
      if (refusal.kind == Failure::Kind::kInvalid) {
        failure->kind = refusal.kind;
        failure->message = refusal.message;
        return false;
      }
      builder.restore(std::move(saved_builder));
      state = saved_state;
      out->refused.push_back(RefusedKernel{function.name, refusal.message});
    }
  }
  if (out->kernels.empty()) {
    if (!out->refused.empty()) {
      failure->kind = Failure::Kind::kNotSupported;
      failure->message = out->refused.front().reason;
      if (out->refused.size() > 1) {
        failure->message += " (and no other kernel of the module translates either)";
      }
      return false;
    }
    failure->kind = Failure::Kind::kInvalid;
    failure->message = "the PTX defines no kernel (.entry with a body)";
    return false;
  }
  out->words = builder.finish();
  return true;
}

}  // namespace hal::ptx_spirv
