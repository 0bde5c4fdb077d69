// Consistency checks of a parsed PTX module (ptx/ir.h), for the tests and the parser's fuzz
// target: every index an operand, label, relocation or target list holds points at something
// that exists, and every size respects the caps the parser promises.
#pragma once

#include <random>
#include <string>

#include "ptx/ir.h"

namespace hal_ptx_test {

// "" when |module| is consistent; otherwise what is wrong, naming the function and line.
std::string check_module(const hal::ptx::ir::Module& module);

// |text| with 1 to 8 random edits: a byte replaced by one of |alphabet|, a run of up to 16 bytes
// erased, or one of |alphabet| inserted. Never empty. Deterministic for a given |random| state.
std::string mutate(const std::string& text, std::mt19937& random, const std::string& alphabet);

}  // namespace hal_ptx_test
