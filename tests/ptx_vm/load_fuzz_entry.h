// The interpreter loader's fuzz entry point, shared by the libFuzzer executable
// (ptx_vm_load_fuzz) and by the corpus regression test, which runs every file of corpus/ through
// it in every build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ptx_vm_fuzz {

// Loads the bytes as a PTX module (hal::ptx_vm::Program::load). A module that fails must say why
// in its log; one that loads must have consistent kernel descriptions, and each of its kernels
// that cannot loop (no backward branch, so that every run ends) is run once on a small block
// with zeroed parameters, no global memory but the module's own variables, and a fault allowed.
// Returns "" when every check held, else what broke; a crash or a sanitizer report is a failure
// too.
std::string load_one(const uint8_t* data, size_t size);

}  // namespace ptx_vm_fuzz
