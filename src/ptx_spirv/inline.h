// Calls to .func, inlined: a kernel that calls functions becomes one function body, which the
// rest of the translator handles as any kernel. nvcc calls .func for its slow paths (double
// trigonometry's argument reduction, pow), and PTX in general may call any function defined
// in the module.
//
// How a call becomes code, following PTX's calling convention (the caller declares .param
// variables, stores the arguments into them, calls, and loads the results from its return
// .param variable):
//  - the caller's .param variables in its body become .local variables, and ld/st.param on
//    them ld/st.local; so do the callee's own;
//  - the callee's formal parameters and return parameters are the caller's argument and
//    result variables themselves (sizes must agree), so no copies are made;
//  - the callee's registers, body variables, labels and branch-target lists are appended to
//    the caller's with their indices moved; its ret becomes a branch to just after the call
//    (guarded as the ret was); its exit stays an exit;
//  - calls inside the callee are inlined the same way, to a bounded depth.
//
// Refused (a Refusal of kind kNotSupported, naming the kernel, the line and the callee):
// indirect calls (through a register), calls to functions declared but not defined in the
// module (vprintf and __assertfail, which device-side printf and assert compile to, among
// them), recursion, arguments that are not .param variables, and expansions beyond the bounds.
//
// Thread-safety: a pure function.
#pragma once

#include "ptx/ir.h"

namespace hal::ptx_spirv {

namespace ir = hal::ptx::ir;

// Whether |function| calls anything (then inline_calls() must run before it translates).
bool has_calls(const ir::Function& function);

// |kernel| (an .entry of |module|, with a body) with every call expanded, into |out|.
// Throws Refusal (kernel.h).
void inline_calls(const ir::Module& module, const ir::Function& kernel, ir::Function* out);

}  // namespace hal::ptx_spirv
