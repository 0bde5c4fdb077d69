// PTX's reserved words and what they mean in the IR (ir.h): types, state spaces, instruction
// modifiers, opcodes and special registers, looked up by their text.
//
// Each lookup takes the word without its leading dot ("f32", not ".f32") unless it says
// otherwise, and returns nullopt for a word it does not know. Lookups are constant time after
// the tables are built (once, on first use; the build is thread-safe).
// Thread-safety: the functions are pure; call them from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ptx/ir.h"

namespace hal::ptx {

// A name as PTX declares one (a variable, register, function, parameter or label): a word with
// no leading '.' and no '.' or "::" inside (those make directives, dotted instructions and
// special registers).
bool is_identifier(std::string_view word);

// "f32" -> Type::kF32, "pred" -> Type::kPred, ...
std::optional<ir::Type> type_from_word(std::string_view word);

// The state space a directive or an instruction modifier names: "global", "shared",
// "shared::cta" (kShared), "shared::cluster", "local", "param", "param::entry", "param::func"
// (kParam), "const", "reg".
std::optional<ir::Space> space_from_word(std::string_view word);

// An instruction modifier: the names of HAL_PTX_MODIFIERS, and "shared::cta" (kShared),
// "param::entry" and "param::func" (kParam).
std::optional<ir::Mod> mod_from_word(std::string_view word);

// A mnemonic of HAL_PTX_OPCODES ("ld", "mma", ...).
std::optional<ir::Opcode> opcode_from_word(std::string_view word);

// The linkage directive ".visible", ".extern", ".weak" or ".common" (with its dot).
std::optional<ir::Linkage> linkage_from_directive(std::string_view directive);

struct SpecialRegister {
  ir::Special special = ir::Special::kTid;
  uint32_t component = 0;
};

// A special register as an operand writes it, with its '%' and any component: "%tid.x"
// (component 0), "%ctaid.z" (2), "%laneid", "%envreg3" (3), "%pm5" (5), "%pm2_64" (kPm64, 2),
// "%reserved_smem_offset_begin" (kReserved: begin 0, end 1, cap 2, _0 3, _1 4).
// Registers with x, y and z components (%tid, %ntid, %ctaid, %nctaid and the cluster ones)
// need one; the others take none. Returns nullopt, with |why| set when the name is a special
// register's written wrongly ("'%tid' needs a component: .x, .y or .z"), otherwise empty.
std::optional<SpecialRegister> special_from_word(std::string_view word, std::string* why);

}  // namespace hal::ptx
