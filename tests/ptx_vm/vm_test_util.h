// Running PTX on the interpreter directly (src/ptx_vm/vm.h), with host buffers as the global
// memory, for tests of instruction semantics, divergence, barriers and faults.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ptx_vm/vm.h"

namespace ptx_vm_test {

using hal::ptx_vm::Fault;
using hal::ptx_vm::FaultKind;
using hal::ptx_vm::Range;

// The global memory of a test: the buffers it allocated, each exactly its size.
class TestMemory : public hal::ptx_vm::MemoryMap {
 public:
  bool find(uint64_t address, uint64_t size, Range* hit) const override {
    for (const Range& r : ranges_) {
      if (address >= r.begin && address - r.begin < r.size &&
          r.size - (address - r.begin) >= size) {
        *hit = r;
        return true;
      }
    }
    return false;
  }
  std::string describe(uint64_t address, uint64_t) const override {
    for (const Range& r : ranges_) {
      if (address >= r.begin + r.size && address < r.begin + r.size + 4096) {
        return std::to_string(address - (r.begin + r.size)) + " bytes past the end of the " +
               std::to_string(r.size) + "-byte allocation";
      }
    }
    return "not inside any allocation";
  }
  void add(const void* p, size_t size) {
    ranges_.push_back(Range{reinterpret_cast<uint64_t>(p), size});
  }
  void add(const Range& r) { ranges_.push_back(r); }

 private:
  std::vector<Range> ranges_;
};

// A typed buffer in the test's global memory.
template <typename T>
struct Buffer {
  std::vector<T> host;
  uint64_t address() const { return reinterpret_cast<uint64_t>(host.data()); }
};

// The parameter buffer of a launch, laid out from the kernel's parameter slots.
class Params {
 public:
  template <typename T>
  Params& add(const T& value) {
    values_.emplace_back(reinterpret_cast<const uint8_t*>(&value),
                         reinterpret_cast<const uint8_t*>(&value) + sizeof(T));
    return *this;
  }
  std::vector<uint8_t> layout(const hal::ptx_vm::KernelInfo& info) const {
    std::vector<uint8_t> out(std::max<uint32_t>(info.param_bytes, 1), 0);
    EXPECT_EQ(values_.size(), info.params.size()) << "parameter count of " << info.name;
    for (size_t i = 0; i < values_.size() && i < info.params.size(); ++i) {
      EXPECT_EQ(values_[i].size(), info.params[i].size) << "parameter " << i << " of " << info.name;
      std::memcpy(out.data() + info.params[i].offset, values_[i].data(),
                  std::min<size_t>(values_[i].size(), info.params[i].size));
    }
    return out;
  }

 private:
  std::vector<std::vector<uint8_t>> values_;
};

class Vm {
 public:
  explicit Vm(unsigned threads = 2) : executor_(threads) {}

  // Loads |ptx|; fails the test (and returns false) when it does not load.
  bool load(const std::string& ptx) {
    hal::ptx_vm::LoadError error;
    program_ = hal::ptx_vm::Program::load(ptx.data(), ptx.size(), {}, &error);
    EXPECT_NE(program_, nullptr) << error.log;
    if (program_ == nullptr) return false;
    for (const Range& r : program_->data()) memory_.add(r);
    return true;
  }
  // The load error's log for PTX that must not load.
  std::string load_error(const std::string& ptx) {
    hal::ptx_vm::LoadError error;
    auto program = hal::ptx_vm::Program::load(ptx.data(), ptx.size(), {}, &error);
    EXPECT_EQ(program, nullptr) << "the PTX loaded";
    return error.log;
  }

  template <typename T>
  Buffer<T>& buffer(std::vector<T> values) {
    auto b = std::make_unique<Buffer<T>>();
    b->host = std::move(values);
    if (b->host.empty()) b->host.resize(1);
    memory_.add(b->host.data(), b->host.size() * sizeof(T));
    Buffer<T>& ref = *b;
    keep_.push_back(
        std::shared_ptr<void>(b.release(), [](void* p) { delete static_cast<Buffer<T>*>(p); }));
    return ref;
  }

  // Runs |kernel| and returns its fault (kind kNone when it ran to the end).
  Fault run(const std::string& kernel, const uint32_t grid[3], const uint32_t block[3],
            const Params& params, uint32_t dynamic_shared = 0) {
    const hal::ptx_vm::Kernel* k = program_ != nullptr ? program_->find(kernel) : nullptr;
    if (k == nullptr) {
      ADD_FAILURE() << "no kernel " << kernel;
      return Fault{FaultKind::kIllegalInstruction, "no kernel"};
    }
    const std::vector<uint8_t> bytes = params.layout(hal::ptx_vm::info(*k));
    hal::ptx_vm::LaunchConfig config;
    for (int i = 0; i < 3; ++i) {
      config.grid[i] = grid[i];
      config.block[i] = block[i];
    }
    config.dynamic_shared_bytes = dynamic_shared;
    config.params = bytes.data();
    config.memory = &memory_;
    return executor_.run(*k, config, &stats_);
  }
  Fault run1(const std::string& kernel, uint32_t grid, uint32_t block, const Params& params,
             uint32_t dynamic_shared = 0) {
    const uint32_t g[3] = {grid, 1, 1};
    const uint32_t b[3] = {block, 1, 1};
    return run(kernel, g, b, params, dynamic_shared);
  }

  const hal::ptx_vm::Program& program() const { return *program_; }
  const hal::ptx_vm::RunStats& stats() const { return stats_; }

 private:
  hal::ptx_vm::Executor executor_;
  std::unique_ptr<hal::ptx_vm::Program> program_;
  TestMemory memory_;
  std::vector<std::shared_ptr<void>> keep_;
  hal::ptx_vm::RunStats stats_;
};

// A PTX module's header.
inline std::string module(const std::string& body, const std::string& target = "sm_80") {
  return ".version 8.0\n.target " + target + "\n.address_size 64\n\n" + body;
}

#define EXPECT_RAN(fault) \
  EXPECT_EQ((fault).kind, ::ptx_vm_test::FaultKind::kNone) << (fault).message

}  // namespace ptx_vm_test
