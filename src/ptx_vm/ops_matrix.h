// What the warp-level matrix instruction families share (ops_matrix.cpp: mma, ldmatrix,
// stmatrix, movmatrix; ops_wmma.cpp: wmma): the whole-warp contract at run time, and operand
// and modifier checks at decode time (the SIMD video decoder, ops_simd.cpp, checks its modifiers
// with only_modifiers too).
#pragma once

#include <initializer_list>
#include <string>

#include "ptx_vm/decode.h"

namespace hal::ptx_vm {

// The .sync.aligned contract: every lane of the warp runs the instruction together. Returns
// false after raising a fault (FaultKind::kIllegalInstruction) naming the missing lanes.
bool whole_warp(Exec& x, uint32_t mask, const char* what);

// Resolves a brace-enclosed list of |count| registers of |bytes| each (a lone register when
// count is 1) into |out|. |what| names the operand for errors. False after d.fail().
bool register_list(DecodeContext& d, const ir::Operand& o, uint32_t count, uint32_t bytes,
                   bool destination, const char* what, Ref* out);

// Refuses every modifier outside |allowed|, naming the first. False after d.fail().
bool only_modifiers(DecodeContext& d, const ir::Instruction& ins,
                    std::initializer_list<ir::Mod> allowed);

// Refuses an instruction without .sync.aligned. False after d.fail().
bool require_sync_aligned(DecodeContext& d, const ir::Instruction& ins);

// "m16n8k16" (or "m8n8" without a k) for messages.
std::string shape_text(const ir::Instruction& ins);

}  // namespace hal::ptx_vm
