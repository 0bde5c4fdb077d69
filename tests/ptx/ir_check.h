// Consistency checks of a parsed PTX module (ptx/ir.h), for the tests and the parser's fuzz
// target: every index an operand, label, relocation or target list holds points at something
// that exists, and every size respects the caps the parser promises.
#pragma once

#include <string>

#include "ptx/ir.h"

namespace hal_ptx_test {

// "" when |module| is consistent; otherwise what is wrong, naming the function and line.
std::string check_module(const hal::ptx::ir::Module& module);

}  // namespace hal_ptx_test
