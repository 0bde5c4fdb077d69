// What hal's CUDA backend reads from PTX text before the driver sees it: the module header
// (.version, .target, .address_size) and the signature of every .entry.
//
// Built on the PTX front end (ir.h) with ParseOptions::bodies = false, so that the backend and
// the CPU PTX driver read headers and signatures with the same code: function bodies are
// skipped by matching braces, and the driver's JIT remains the judge of the instructions. The
// input is untrusted bytes of any content:
//  - it is read only within [text.data(), text.data() + text.size()]; no NUL terminator is
//    needed or assumed;
//  - the work is linear in the input size, with fixed caps on identifier length, entries and
//    parameters, so no input makes it loop, recurse deeply or allocate without bound;
//  - anything it cannot read is a clear error naming the line, never a crash.
// Module variables and .func signatures are read too (and must be well formed); only the
// entries are reported.
//
// Parameter kinds (the rule hal documents for PTX and, through classify_params, for cubins):
//  - a 64-bit parameter with the .ptr qualifier is a pointer (on a narrower type, as in 32-bit
//    PTX, .ptr is ignored: the argument is marshalled as the value it is);
//  - a scalar 64-bit integer parameter (.u64, .s64, .b64) is a pointer, because nvcc declares
//    every pointer parameter that way (without .ptr);
//  - except that when the entry name is an Itanium-mangled C++ name (nvcc's default), the
//    demangled parameter types decide for those 64-bit integers: "unsigned long" is a value,
//    "float*" a pointer. extern "C" kernels keep the rule above;
//  - every other parameter is a value: scalars by their type's size and alignment, and
//    ".align N .b8 name[K]" (structs, arrays) as K bytes with alignment N.
//
// Thread-safety: the functions are pure; call them from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/ir.h"

namespace hal::ptx {

enum class ParamKind { kPointer, kValue };
// What a scalar value parameter holds: .uN/.sN integers, .f16/.bf16/.f32/.f64 floats; bit
// types, vectors, arrays and pointers are kUnknown.
enum class ParamType { kUnknown, kInteger, kFloat };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::kValue;
  ParamType type = ParamType::kUnknown;
  uint32_t size = 0;       // bytes the argument occupies
  uint32_t alignment = 0;  // bytes
  // Pointers only: the alignment the kernel assumes of the address (".ptr .align N"), else 1.
  uint32_t pointee_alignment = 1;
};

struct Entry {
  std::string name;
  std::vector<Param> params;
  uint32_t reqntid[3] = {0, 0, 0};  // .reqntid (fixed block size), zeros when absent
  uint32_t maxntid = 0;             // product of .maxntid, 0 when absent
};

struct Module {
  uint32_t version_major = 0;  // .version major.minor (PTX ISA)
  uint32_t version_minor = 0;
  std::string target;          // the architecture named first in .target, e.g. "sm_90a"
  uint32_t target_sm = 0;      // its number, e.g. 90 for "sm_90a" (10 * major + minor)
  uint32_t address_size = 32;  // .address_size; PTX's default when the directive is absent
  std::vector<Entry> entries;  // every defined .entry, in file order
};

// Caps that bound the work on hostile input (the front end's, ir.h). Inputs beyond them are
// errors, not truncations.
inline constexpr size_t kMaxIdentifierLength = ir::kMaxIdentifierLength;
inline constexpr size_t kMaxEntries = ir::kMaxFunctions;  // .entry and .func together
inline constexpr size_t kMaxParamsPerEntry = ir::kMaxParams;
inline constexpr uint32_t kMaxParamBytes = ir::kMaxParamBytes;  // per parameter and per entry

// Parses |text|. On success fills |out| and returns true. On failure returns false and sets
// |error| to "line N: what was expected and what was seen"; |out| is then unspecified.
// A missing .version or .target is an error. .address_size defaults to 32 as PTX says; the
// caller decides whether it accepts 32-bit code.
bool parse(std::string_view text, Module* out, std::string* error);

// Decides which parameters of a kernel named |mangled_name| are pointers when all that is known
// is each parameter's size (a cubin through cuFuncGetParamInfo) or its PTX type. For each index
// i, |is_64bit_integer[i]| says whether the rule above makes parameter i a pointer candidate;
// the result says, per parameter, whether it is a pointer. Uses the demangled signature when
// |mangled_name| is a mangled C++ name whose parameter count matches; otherwise every candidate
// is a pointer.
std::vector<bool> classify_params(std::string_view mangled_name,
                                  const std::vector<bool>& is_64bit_integer);

}  // namespace hal::ptx
