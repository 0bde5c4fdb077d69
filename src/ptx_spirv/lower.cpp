// The instruction dispatcher: refusals that apply to every family first, then each family's
// lowering in turn (lower_*.cpp), then a refusal naming what is left.
#include "ptx_spirv/kernel.h"

namespace hal::ptx_spirv {

namespace {

using O = ir::Opcode;

}  // namespace

void Kernel::lower(const ir::Instruction& ins) {
  if (ins.opcode == ir::Opcode::kWgmma) {
    refuse(ins,
           "wgmma (sm_90's warpgroup matrix instructions) does not translate to Vulkan; PTX "
           "compiled for sm_80 uses mma.sync, which does");
  }
  // wmma's operation words (.load.a, .store.d, .mma) are not modifiers: lower_wmma reads them.
  if (!ins.unknown_mods.empty() && ins.opcode != ir::Opcode::kWmma) {
    refuse(ins, "modifier '." + ins.unknown_mods.front() + "' is not supported");
  }
  if (lower_warp(ins) || lower_memory(ins) || lower_integer(ins) || lower_float(ins) ||
      lower_compare(ins) || lower_convert(ins) || lower_simd(ins) || lower_misc(ins)) {
    return;
  }
  refuse(ins, std::string("'") + ir::opcode_name(ins.opcode) +
                  "' in this form does not translate to SPIR-V yet");
}

// Moves, barriers, fences and the instructions that need no code.
bool Kernel::lower_misc(const ir::Instruction& ins) {
  switch (ins.opcode) {
    case O::kMov: {
      if (ins.types.size() != 1 || ins.operands.size() != 2) {
        invalid(ins, "mov takes one type, a destination and a source");
      }
      const ir::Type type = ins.types[0];
      if (type == ir::Type::kPred) {
        write(ins, ins.operands[0], type, read_predicate(ins, ins.operands[1]));
        return true;
      }
      const uint32_t bytes = ir::type_size(type);
      if (bytes == 0 || bytes > 8) refuse(ins, "mov of this type is not supported");
      const ir::Operand& src = ins.operands[1];
      if (src.kind == ir::OperandKind::kSymbol && src.symbol.kind == ir::SymbolKind::kParam) {
        refuse(ins, "the address of a kernel parameter is not supported");
      }
      write_bits(ins, ins.operands[0], bytes, read_bits(ins, src, bytes), false);
      return true;
    }
    case O::kBar:
    case O::kBarrier: {
      const bool sync = ins.mods.has(ir::Mod::kSync) || ins.mods.empty() ||
                        (ins.opcode == O::kBarrier && !ins.mods.has(ir::Mod::kArrive) &&
                         !ins.mods.has(ir::Mod::kRed));
      if (!sync || ins.mods.has(ir::Mod::kArrive) || ins.mods.has(ir::Mod::kRed)) {
        refuse(ins, "only bar.sync and barrier.sync translate (no arrive or reduction forms)");
      }
      if (ins.operands.size() > 1) {
        refuse(ins,
               "a barrier with a thread count is not supported (every thread of the block "
               "takes part in a Vulkan barrier)");
      }
      const uint32_t semantics = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease |
                                                       spv::MemorySemanticsMask::WorkgroupMemory);
      b.op_void(spv::Op::OpControlBarrier,
                {b.u32(static_cast<uint32_t>(spv::Scope::Workgroup)),
                 b.u32(static_cast<uint32_t>(spv::Scope::Workgroup)), b.u32(semantics)});
      return true;
    }
    case O::kMembar:
    case O::kFence: {
      if (ins.mods.has(ir::Mod::kProxy)) return true;  // proxy fences order nothing here
      const bool cta = ins.mods.has(ir::Mod::kCta);
      const uint32_t semantics = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease |
                                                       spv::MemorySemanticsMask::WorkgroupMemory |
                                                       spv::MemorySemanticsMask::UniformMemory);
      b.op_void(spv::Op::OpMemoryBarrier,
                {b.u32(static_cast<uint32_t>(cta ? spv::Scope::Workgroup : spv::Scope::Device)),
                 b.u32(semantics)});
      return true;
    }
    case O::kNanosleep:
    case O::kPrefetch:
    case O::kPrefetchu:
    case O::kApplypriority:
    case O::kPmevent:
      return true;  // hints: no effect on results
    case O::kCall:
      refuse(ins, "calls to .func are not translated yet");
    case O::kTrap:
    case O::kBrkpt:
      refuse(ins, "trap and brkpt have no Vulkan counterpart (a kernel cannot abort its launch)");
    default:
      return false;
  }
}

}  // namespace hal::ptx_spirv
