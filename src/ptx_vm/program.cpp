// Loading a module: parse, check the header against the device, allocate the module variables,
// decode every entry.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "ptx/ir.h"
#include "ptx_vm/code.h"
#include "ptx_vm/decoder.h"
#include "ptx_vm/vm.h"

namespace hal::ptx_vm {
namespace {

namespace ir = hal::ptx::ir;

constexpr size_t kMaxLogLines = 20;
constexpr uint64_t kMaxModuleData = uint64_t{1} << 32;

uint64_t align_up(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

class LoadedProgram final : public Program {
 public:
  size_t kernel_count() const override { return kernels_.size(); }
  const Kernel& kernel(size_t index) const override { return *kernels_[index]; }
  const Kernel* find(std::string_view name) const override {
    for (const auto& k : kernels_) {
      if (k->info.name == name) return k.get();
    }
    return nullptr;
  }
  const std::vector<Range>& data() const override { return data_; }

  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<Range> data_;
  std::unique_ptr<uint8_t[]> storage_;
};

void add_line(std::string* log, const std::string& line) {
  if (!log->empty()) *log += "\n";
  *log += line;
}

// Lays out and initialises the module's .global and .const variables in one host block.
bool place_module_data(const ir::Module& module, LoadedProgram* program, ModuleAddresses* addresses,
                       LoadError* error) {
  addresses->variables.assign(module.variables.size(), 0);
  std::vector<uint64_t> offsets(module.variables.size(), 0);
  uint64_t top = 0;
  uint64_t max_align = 16;
  for (size_t i = 0; i < module.variables.size(); ++i) {
    const ir::Variable& v = module.variables[i];
    if (v.space != ir::Space::kGlobal && v.space != ir::Space::kConst) continue;
    if (v.linkage == ir::Linkage::kExtern) {
      error->status = LoadStatus::kInvalidPtx;
      add_line(&error->log, "line " + std::to_string(v.line) + ": '" + v.name +
                                "' is declared .extern but not defined in the module: the CPU "
                                "PTX device links nothing into a module");
      return false;
    }
    const uint64_t align = v.alignment();
    max_align = std::max(max_align, align);
    top = align_up(top, align);
    offsets[i] = top;
    top += std::max<uint64_t>(v.size(), 1);
    if (top > kMaxModuleData) {
      error->status = LoadStatus::kOutOfMemory;
      add_line(&error->log, "the module's variables need more than 4 GiB");
      return false;
    }
  }
  if (top == 0) return true;
  program->storage_.reset(new (std::nothrow) uint8_t[top + max_align]());
  if (!program->storage_) {
    error->status = LoadStatus::kOutOfMemory;
    add_line(&error->log,
             "cannot allocate " + std::to_string(top) + " bytes for the module's variables");
    return false;
  }
  const uintptr_t raw = reinterpret_cast<uintptr_t>(program->storage_.get());
  const uintptr_t base = (raw + max_align - 1) / max_align * max_align;
  program->data_.push_back(Range{base, top});
  for (size_t i = 0; i < module.variables.size(); ++i) {
    const ir::Variable& v = module.variables[i];
    if (v.space != ir::Space::kGlobal && v.space != ir::Space::kConst) continue;
    addresses->variables[i] = base + offsets[i];
    const size_t n = std::min<size_t>(v.init.size(), v.size());
    if (n > 0) std::memcpy(reinterpret_cast<void*>(base + offsets[i]), v.init.data(), n);
  }
  // Addresses inside initialisers: other module variables' host addresses.
  for (size_t i = 0; i < module.variables.size(); ++i) {
    const ir::Variable& v = module.variables[i];
    for (const ir::Relocation& r : v.relocations) {
      uint64_t value = 0;
      if (r.symbol.kind == ir::SymbolKind::kModuleVariable &&
          r.symbol.index < module.variables.size() && addresses->variables[r.symbol.index] != 0) {
        value = addresses->variables[r.symbol.index] + static_cast<uint64_t>(r.addend);
      } else {
        error->status = LoadStatus::kInvalidPtx;
        add_line(&error->log, "line " + std::to_string(v.line) + ": the initializer of '" + v.name +
                                  "' holds an address the CPU PTX device cannot give "
                                  "(a function, or a shared or local variable)");
        return false;
      }
      // "0xFF00(generic(sym))" stores one byte of the address, zero-extended to the element.
      if (r.mask != 0) value = (value & r.mask) >> __builtin_ctzll(r.mask);
      const uint32_t bytes = r.size != 0 ? std::min<uint32_t>(r.size, 8) : 8;
      if (r.offset + bytes > v.size()) continue;
      std::memcpy(reinterpret_cast<void*>(addresses->variables[i] + r.offset), &value, bytes);
    }
  }
  return true;
}

}  // namespace

const KernelInfo& info(const Kernel& kernel) {
  return kernel.info;
}

std::unique_ptr<Program> Program::load(const char* text, size_t size, const LoadOptions& options,
                                       LoadError* error) {
  *error = LoadError{};
  if (const void* nul = std::memchr(text, 0, size); nul != nullptr) {
    size = static_cast<size_t>(static_cast<const char*>(nul) - text);
  }
  ir::Module module;
  ir::ParseError parse_error;
  if (!ir::parse(text, size, ir::ParseOptions{}, &module, &parse_error)) {
    error->status = LoadStatus::kInvalidPtx;
    error->log = "line " + std::to_string(parse_error.line) + ": " + parse_error.message;
    return nullptr;
  }
  const uint32_t version = module.version_major * 10 + module.version_minor;
  if (version > options.max_ptx_version || module.version_minor > 9) {
    error->status = LoadStatus::kUnsupportedVersion;
    error->log = "the PTX is .version " + std::to_string(module.version_major) + "." +
                 std::to_string(module.version_minor) + "; the CPU PTX device reads PTX up to " +
                 std::to_string(options.max_ptx_version / 10) + "." +
                 std::to_string(options.max_ptx_version % 10);
    return nullptr;
  }
  const std::string device = "sm_" + std::to_string(options.sm);
  if (module.target_sm > options.sm ||
      (module.target_suffix != 0 && module.target_sm != options.sm)) {
    error->status = LoadStatus::kInvalidPtx;
    error->log = "the PTX targets " + module.target + ", and the CPU PTX device is " + device +
                 ": compile for " + device + " or lower";
    return nullptr;
  }
  if (module.address_size != 64) {
    error->status = LoadStatus::kInvalidPtx;
    error->log =
        "the PTX uses 32-bit addresses (.address_size 32 or none); the CPU PTX device "
        "runs 64-bit PTX only";
    return nullptr;
  }

  auto program = std::make_unique<LoadedProgram>();
  ModuleAddresses addresses;
  if (!place_module_data(module, program.get(), &addresses, error)) return nullptr;

  size_t failures = 0;
  for (size_t i = 0; i < module.functions.size(); ++i) {
    const ir::Function& f = module.functions[i];
    if (!f.is_entry || !f.has_body) continue;
    auto kernel = std::make_unique<Kernel>();
    std::string why;
    if (!decode_kernel(module, addresses, i, kernel.get(), &why)) {
      if (++failures <= kMaxLogLines) add_line(&error->log, why);
      continue;
    }
    program->kernels_.push_back(std::move(kernel));
  }
  if (failures > 0) {
    if (failures > kMaxLogLines) {
      add_line(&error->log, "... and " + std::to_string(failures - kMaxLogLines) +
                                " more kernels that cannot be decoded");
    }
    error->status = LoadStatus::kInvalidPtx;
    return nullptr;
  }
  return program;
}

}  // namespace hal::ptx_vm
