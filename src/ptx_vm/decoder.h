// Decoding a whole kernel (see decode.h for what a family decoder sees).
#pragma once

#include "ptx/ir.h"
#include "ptx_vm/code.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hal::ptx_vm {

// Where each module-scope variable of a loaded module lives: the host address of a .global or
// .const variable (0 for .shared ones, which live per block).
struct ModuleAddresses {
  std::vector<uint64_t> variables;  // indexed like ir::Module::variables
};

// Decodes the entry |module.functions[entry]| into |out|. On failure returns false with
// |error| holding one "line N: ..." line.
bool decode_kernel(const hal::ptx::ir::Module& module, const ModuleAddresses& addresses,
                   size_t entry, Kernel* out, std::string* error);

}  // namespace hal::ptx_vm
