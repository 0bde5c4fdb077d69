// The stand-in interpreter: see fake_vm.h.
#include "fake_vm.h"
#include "ptx_vm/vm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hal::ptx_vm {

class FakeProgram;

class Kernel {
 public:
  KernelInfo info;
  const FakeProgram* program = nullptr;
  std::string body;
};

const KernelInfo& info(const Kernel& kernel) {
  return kernel.info;
}

class FakeProgram final : public Program {
 public:
  size_t kernel_count() const override { return kernels.size(); }
  const Kernel& kernel(size_t index) const override { return *kernels[index]; }
  const Kernel* find(std::string_view name) const override {
    for (const auto& kernel : kernels) {
      if (kernel->info.name == name) return kernel.get();
    }
    return nullptr;
  }
  const std::vector<Range>& data() const override { return ranges; }

  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::vector<uint64_t>> storage;
  std::vector<Range> ranges;
};

namespace {

uint32_t type_size(const std::string& type) {
  if (type == ".u8" || type == ".s8" || type == ".b8") return 1;
  if (type == ".u16" || type == ".s16" || type == ".b16" || type == ".f16") return 2;
  if (type == ".u32" || type == ".s32" || type == ".b32" || type == ".f32") return 4;
  if (type == ".u64" || type == ".s64" || type == ".b64" || type == ".f64") return 8;
  return 0;
}

uint32_t align_up(uint32_t value, uint32_t align) {
  return align == 0 ? value : (value + align - 1) / align * align;
}

std::string strip_comments(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      for (size_t j = i; j < std::min(end, text.size()); ++j) {
        if (text[j] == '\n') out += '\n';
      }
      i = end == std::string::npos ? text.size() : end + 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Splits a declaration like ".param .align 16 .b8 name[16]" into its parts.
struct Declaration {
  uint32_t align = 0;
  std::string type;
  std::string name;
  uint32_t count = 1;
  bool has_initializer = false;
  uint64_t initializer = 0;
};

Declaration parse_declaration(const std::string& line) {
  Declaration out;
  std::string cleaned = line;
  for (char& c : cleaned) {
    if (c == ',' || c == ';' || c == ')' || c == '(') c = ' ';
  }
  std::istringstream words(cleaned);
  std::string word;
  while (words >> word) {
    if (word == ".align") {
      words >> out.align;
    } else if (type_size(word) != 0) {
      out.type = word;
    } else if (word == "=") {
      words >> out.initializer;
      out.has_initializer = true;
    } else if (word[0] != '.') {
      const size_t bracket = word.find('[');
      out.name = word.substr(0, bracket);
      if (bracket != std::string::npos) {
        out.count = static_cast<uint32_t>(std::strtoul(word.c_str() + bracket + 1, nullptr, 10));
      }
    }
  }
  return out;
}

void parse_dims(const std::string& line, const char* directive, uint32_t dims[3]) {
  const size_t at = line.find(directive);
  std::string rest = line.substr(at + std::strlen(directive));
  for (char& c : rest) {
    if (c == ',') c = ' ';
  }
  std::istringstream numbers(rest);
  for (int i = 0; i < 3 && (numbers >> dims[i]); ++i) {
  }
}

}  // namespace

std::unique_ptr<Program> Program::load(const char* text, size_t size, const LoadOptions& options,
                                       LoadError* error) {
  const std::string source = strip_comments(std::string(text, strnlen(text, size)));
  auto program = std::make_unique<FakeProgram>();
  std::istringstream lines(source);
  std::string line;
  int number = 0;
  int depth = 0;
  Kernel* kernel = nullptr;
  bool in_params = false;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find("fake_vm_invalid") != std::string::npos) {
      error->status = LoadStatus::kInvalidPtx;
      error->log = "line " + std::to_string(number) + ": 'fake_vm_invalid': not an instruction";
      return nullptr;
    }
    const size_t version = line.find(".version");
    if (version != std::string::npos && depth == 0) {
      unsigned major = 0, minor = 0;
      std::sscanf(line.c_str() + version + 8, "%u.%u", &major, &minor);
      if (major * 10 + minor > options.max_ptx_version) {
        error->status = LoadStatus::kUnsupportedVersion;
        error->log = "line " + std::to_string(number) + ": .version is too new";
        return nullptr;
      }
    }
    if (line.find(".entry") != std::string::npos) {
      auto next = std::make_unique<Kernel>();
      next->program = program.get();
      next->info.line = static_cast<uint32_t>(number);
      std::string after = line.substr(line.find(".entry") + 6);
      for (char& c : after) {
        if (c == '(') c = ' ';
      }
      std::istringstream name(after);
      name >> next->info.name;
      kernel = next.get();
      program->kernels.push_back(std::move(next));
      in_params = true;
    }
    if (kernel != nullptr && in_params && line.find(".param") != std::string::npos) {
      const Declaration param = parse_declaration(line);
      const uint32_t element = type_size(param.type);
      const uint32_t align = param.align != 0 ? param.align : element;
      ParamSlot slot;
      slot.offset = align_up(kernel->info.param_bytes, align);
      slot.size = element * param.count;
      slot.align = align;
      kernel->info.params.push_back(slot);
      kernel->info.param_bytes = slot.offset + slot.size;
    }
    if (kernel != nullptr && line.find(".reqntid") != std::string::npos) {
      parse_dims(line, ".reqntid", kernel->info.reqntid);
    }
    if (kernel != nullptr && line.find(".maxntid") != std::string::npos) {
      parse_dims(line, ".maxntid", kernel->info.maxntid);
    }
    if (depth > 0 && kernel != nullptr) {
      kernel->body += line + "\n";
      if (line.find(".shared") != std::string::npos && line.find(".extern") == std::string::npos) {
        const Declaration shared = parse_declaration(line);
        kernel->info.static_shared_bytes =
            align_up(kernel->info.static_shared_bytes, std::max(shared.align, 1u)) +
            type_size(shared.type) * shared.count;
      }
      if (line.find(".local") != std::string::npos) {
        const Declaration local = parse_declaration(line);
        kernel->info.local_bytes += type_size(local.type) * local.count;
      }
      const size_t reg = line.find(".reg");
      if (reg != std::string::npos) {
        const size_t open = line.find('<', reg);
        if (open != std::string::npos) {
          kernel->info.registers +=
              static_cast<uint32_t>(std::strtoul(line.c_str() + open + 1, nullptr, 10));
        }
      }
    }
    if (depth == 0 && kernel == nullptr &&
        (line.find(".global") != std::string::npos || line.find(".const") != std::string::npos) &&
        line.find(".entry") == std::string::npos) {
      const Declaration variable = parse_declaration(line);
      const uint32_t bytes = type_size(variable.type) * variable.count;
      if (bytes > 0) {
        program->storage.emplace_back((bytes + 7) / 8, 0);
        std::vector<uint64_t>& memory = program->storage.back();
        if (variable.has_initializer) std::memcpy(memory.data(), &variable.initializer, bytes);
        program->ranges.push_back(Range{reinterpret_cast<uint64_t>(memory.data()), bytes});
      }
    }
    for (char c : line) {
      if (c == ')') in_params = false;
      if (c == '{') ++depth;
      if (c == '}' && --depth == 0) kernel = nullptr;
    }
  }
  for (auto& each : program->kernels) {
    const KernelInfo& info = each->info;
    uint32_t limit = 0;
    if (info.reqntid[0] != 0) {
      limit = info.reqntid[0] * std::max(info.reqntid[1], 1u) * std::max(info.reqntid[2], 1u);
    } else if (info.maxntid[0] != 0) {
      limit = info.maxntid[0] * std::max(info.maxntid[1], 1u) * std::max(info.maxntid[2], 1u);
    }
    each->info.max_threads_per_block = limit != 0 ? limit : 1024;
    if (each->body.find("reverse_buffer") != std::string::npos) {
      each->info.dynamic_shared_align = 4;
    }
  }
  return program;
}

namespace {

std::mutex g_mutex;
hal_ptx_cpu_fake_launch g_last{};
uint64_t g_launches = 0;

template <typename T>
T param(const LaunchConfig& config, const KernelInfo& info, size_t index) {
  T value{};
  if (index < info.params.size()) {
    std::memcpy(&value,
                static_cast<const unsigned char*>(config.params) + info.params[index].offset,
                std::min<size_t>(sizeof(T), info.params[index].size));
  }
  return value;
}

Fault access_fault(const Kernel& kernel, const LaunchConfig& config, uint64_t address,
                   uint64_t size, bool misaligned = false) {
  Fault fault;
  fault.kind = misaligned ? FaultKind::kMisalignedAddress : FaultKind::kIllegalAddress;
  char where[64];
  std::snprintf(where, sizeof(where), "%#llx", static_cast<unsigned long long>(address));
  fault.message =
      "kernel '" + kernel.info.name + "' (line " + std::to_string(kernel.info.line + 1) +
      ": 'st.global.u32'), block (0,0,0), thread (0,0,0): write of " + std::to_string(size) +
      " bytes at " + where + ": " + config.memory->describe(address, size);
  return fault;
}

Fault simple_fault(const Kernel& kernel, FaultKind kind, const char* what) {
  return Fault{kind, "kernel '" + kernel.info.name + "' (line " +
                         std::to_string(kernel.info.line + 1) +
                         "), block (0,0,0), thread (0,0,0): " + what};
}

}  // namespace

struct Executor::Pool {
  unsigned threads = 1;
};

Executor::Executor(unsigned threads) : pool_(std::make_unique<Pool>()) {
  pool_->threads = std::max(threads, 1u);
}
Executor::~Executor() = default;
unsigned Executor::threads() const {
  return pool_->threads;
}

Fault Executor::run(const Kernel& kernel, const LaunchConfig& config, RunStats* stats) {
  const KernelInfo& info = kernel.info;
  const uint64_t block_threads = uint64_t{config.block[0]} * config.block[1] * config.block[2];
  const uint64_t threads =
      block_threads * uint64_t{config.grid[0]} * config.grid[1] * config.grid[2];
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::snprintf(g_last.kernel, sizeof(g_last.kernel), "%s", info.name.c_str());
    std::copy(config.grid, config.grid + 3, g_last.grid);
    std::copy(config.block, config.block + 3, g_last.block);
    g_last.dynamic_shared_bytes = config.dynamic_shared_bytes;
    g_last.param_bytes = info.param_bytes;
    std::memset(g_last.params, 0, sizeof(g_last.params));
    if (config.params != nullptr) {
      std::memcpy(g_last.params, config.params, std::min<size_t>(info.param_bytes, 256));
    }
    ++g_launches;
  }
  if (stats != nullptr) {
    stats->lane_instructions = threads * 10;
    stats->warp_instructions =
        (block_threads + 31) / 32 * config.grid[0] * config.grid[1] * config.grid[2] * 10;
  }
  const std::string& name = info.name;
  if (name == "add_one" || name == "fill_u32") {
    const uint64_t data = param<uint64_t>(config, info, 0);
    const uint32_t n = param<uint32_t>(config, info, 1);
    const uint32_t value = param<uint32_t>(config, info, 2);
    for (uint64_t i = 0; i < std::min<uint64_t>(n, threads); ++i) {
      const uint64_t address = data + 4 * i;
      if (!config.memory->find(address, 4, nullptr))
        return access_fault(kernel, config, address, 4);
      auto* word = reinterpret_cast<uint32_t*>(address);
      *word = name == "add_one" ? *word + 1 : value;
    }
  } else if (name == "store_at") {
    const uint64_t address =
        param<uint64_t>(config, info, 0) + 4 * param<uint64_t>(config, info, 1);
    if (address % 4 != 0) return access_fault(kernel, config, address, 4, true);
    if (!config.memory->find(address, 4, nullptr)) return access_fault(kernel, config, address, 4);
    *reinterpret_cast<uint32_t*>(address) = 42;
  } else if (name == "bump_counter") {
    const uint64_t out = param<uint64_t>(config, info, 0);
    const auto& ranges = kernel.program->data();
    if (ranges.empty()) return simple_fault(kernel, FaultKind::kIllegalAddress, "no variable");
    if (!config.memory->find(ranges[0].begin, 4, nullptr)) {
      return access_fault(kernel, config, ranges[0].begin, 4);
    }
    if (!config.memory->find(out, 4, nullptr)) return access_fault(kernel, config, out, 4);
    auto* counter = reinterpret_cast<uint32_t*>(ranges[0].begin);
    *reinterpret_cast<uint32_t*>(out) = ++*counter;
  } else if (name == "sleep_ms") {
    std::this_thread::sleep_for(std::chrono::milliseconds(param<uint32_t>(config, info, 0)));
  } else if (name == "fault_trap") {
    return simple_fault(kernel, FaultKind::kTrap, "trap");
  } else if (name == "fault_assert") {
    return simple_fault(kernel, FaultKind::kAssert, "assertion failed");
  } else if (name == "fault_barrier") {
    return simple_fault(kernel, FaultKind::kBarrier, "bar.sync in a diverged warp");
  } else if (name == "fault_misaligned") {
    return simple_fault(kernel, FaultKind::kMisalignedAddress, "misaligned read");
  } else if (name == "fault_illegal_instruction") {
    return simple_fault(kernel, FaultKind::kIllegalInstruction, "shfl membermask disagrees");
  }
  return Fault{};
}

}  // namespace hal::ptx_vm

extern "C" __attribute__((visibility("default"))) uint64_t hal_ptx_cpu_fake_vm_last_launch(
    hal_ptx_cpu_fake_launch* out) {
  std::lock_guard<std::mutex> lock(hal::ptx_vm::g_mutex);
  if (out != nullptr) *out = hal::ptx_vm::g_last;
  return hal::ptx_vm::g_launches;
}
