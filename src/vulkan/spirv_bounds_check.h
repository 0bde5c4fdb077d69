// Bounds checks for storage-buffer arrays in SPIR-V kernels (HAL_VULKAN_VALIDATION=gpu).
//
// add_bounds_checks() rewrites a module so that every load, store and atomic on an element of a
// storage buffer's runtime array (the `float data[]` of `buffer B { float data[]; }`) first
// compares the element index with OpArrayLength, which the driver computes from the descriptor's
// range, that is from the end of the allocation the argument points into (docs/ABI.md). An
// access in bounds runs as before. An access out of bounds is skipped (a load yields 0; a load of
// 8- or 16-bit values the module has no arithmetic for, which have no 0 to yield, goes ahead) and
// is counted in a small record buffer that hal binds at binding 0 of an extra descriptor set; the
// first such access writes which site it was, its index and the array's length:
//
//   word 0  out-of-bounds accesses in the launch
//   word 1  the site of the first recorded one, plus 1 (BoundsChecks::sites[word 1 - 1])
//   word 2  its element index (the low 32 bits, as an unsigned number)
//   word 3  the array's length in elements
//
// Not checked: members of a block before its runtime array and blocks without one (their size
// is fixed by the type, not by the allocation), accesses through pointers the rewrite cannot
// follow (function parameters, OpPtrAccessChain, variable pointers, whole-object copies), buffer
// device addresses, and shared (Workgroup) memory.
//
// Thread-safety: add_bounds_checks() is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hal::vulkan {

constexpr uint32_t kBoundsRecordWords = 4;

// One checked access of the module.
struct BoundsSite {
  uint32_t set = 0;
  uint32_t binding = 0;
  bool write = false;         // a store or an atomic; else a load
  bool skipped = false;       // an access out of bounds is skipped (else only reported)
  uint32_t stride = 0;        // bytes per array element (its ArrayStride)
  uint32_t array_offset = 0;  // byte offset of the array inside the block
  std::string name;           // the buffer variable's name, else its block's, else ""
};

struct BoundsChecks {
  uint32_t set = 0;  // the record buffer is binding 0 of this set
  std::vector<BoundsSite> sites;
};

// Instruments |words| (a valid module, native endian). |record_set| must be a set no resource of
// the module uses. On success |out_words| holds the new module and |out| its sites; a module
// without any access to check comes back unchanged with no sites. False with |error| when the
// module cannot be read.
bool add_bounds_checks(const std::vector<uint32_t>& words, uint32_t record_set,
                       std::vector<uint32_t>* out_words, BoundsChecks* out, std::string* error);

}  // namespace hal::vulkan
