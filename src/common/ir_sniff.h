// IR sniffing: what kind of blob a caller handed to hal_module_load.
//
// Looks only at the first bytes (PTX: past leading whitespace and comments), never past |size|,
// and decides nothing about validity beyond that: each backend validates its IR fully.
#pragma once

#include <hal/hal.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hal {

// Sets *ir to HAL_IR_SPIRV (magic 0x07230203 in either byte order), HAL_IR_PTX (text whose
// first directive is .version), HAL_IR_CUBIN (ELF) or HAL_IR_FATBIN (fatbin magic 0xBA55ED50).
// Anything else is HAL_ERROR_INVALID_IR with a message showing the first bytes seen.
hal_status sniff_ir(const uint8_t* data, size_t size, hal_ir* ir);

// "PTX", "SPIR-V", "cubin", "fatbin", or "auto".
const char* ir_name(hal_ir ir);

// The IR bits of |mask| as "PTX, cubin" (or "none").
std::string ir_mask_names(uint32_t mask);

}  // namespace hal
