// A PTX kernel's parameters as hal describes them (docs/ABI.md, "PTX (CUDA)"), from the
// signature the PTX front end reads (ptx/reader.h). One conversion for every driver that loads
// PTX (CUDA, and Vulkan through translation), so that one args array launches the same kernel
// on either kind of device.
//
// Header-only: included by drivers that link the PTX front end; the core never includes it.
#pragma once

#include <vector>

#include "common/function_desc.h"
#include "ptx/reader.h"

namespace hal {

inline std::vector<ParamInfo> ptx_param_infos(const ptx::Entry& entry) {
  std::vector<ParamInfo> params;
  params.reserve(entry.params.size());
  for (const ptx::Param& param : entry.params) {
    ParamInfo info;
    info.kind = param.kind == ptx::ParamKind::kPointer ? HAL_PARAM_POINTER : HAL_PARAM_VALUE;
    info.size = param.size;
    // For a pointer, what the kernel needs of the address (hal_param_info.alignment).
    info.alignment = info.kind == HAL_PARAM_POINTER ? param.pointee_alignment : param.alignment;
    info.nullable = info.kind == HAL_PARAM_POINTER;  // PTX takes raw addresses: NULL passes
    info.type = param.type == ptx::ParamType::kFloat     ? HAL_PARAM_TYPE_FLOAT
                : param.type == ptx::ParamType::kInteger ? HAL_PARAM_TYPE_INTEGER
                                                         : HAL_PARAM_TYPE_UNKNOWN;
    params.push_back(info);
  }
  return params;
}

}  // namespace hal
