// The on-disk cache of PTX translations, so that loading the same PTX again (in this process or
// a later one) does not translate it again.
//
// Key: the PTX text (up to its first NUL, as loaded), hal's version, the identity of this build
// of the driver (its ELF build id, when it has one: a rebuilt translator never reads its
// predecessor's output, even at the same version) and every field of the translation Target.
// The file lives in <dir>/ptx-spirv/, where <dir> is the pipeline cache's directory
// (PipelineCache::default_dir(): HAL_CACHE_DIR, else the user's cache); its name is a hash of the
// key, and it holds the whole key again, so a hash collision is a miss, never a wrong module.
//
// File format (version 3, little-endian): the key (magic "HALPTXSV", format version, hal
// version, build id, Target fields, PTX length and text), then the KernelInfo list, the refused
// kernels (name and reason) and the SPIR-V words, then an FNV-1a checksum of everything before it.
// A file that is missing, truncated, corrupt, of another format or for another key is a miss (with
// the reason). A file that passes is what this build wrote after validating it, so the caller
// does not run the SPIR-V validator on it again (the validator is most of a load's time); it
// still checks the kernels against the PTX and reflects the module as for a fresh translation.
// The checksum finds accidents, not forgeries: whoever can write the cache directory can already
// change what a kernel computes, validated or not, so that directory is trusted as the Vulkan
// pipeline cache beside it is.
//
// Writing goes to a temporary file next to the target, renamed over it, so readers never see a
// partial file and concurrent writers (threads or processes) do not corrupt each other. Failures
// to write are logged, never reported: the cache is an optimisation.
//
// Size: after each write, when the directory's cache files take more than kPtxCacheBudgetBytes,
// the least recently used (written or read) are removed until they take three quarters of it.
// Files of earlier builds of hal, never read again, go first.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include "ptx_spirv/translate.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hal::vulkan {

// The cache file for |ptx| translated for |target| under |dir| (the cache directory, as
// PipelineCache::default_dir() gives it); empty when |dir| is empty (no cache).
std::string ptx_cache_path(const std::string& dir, std::string_view ptx,
                           const ptx_spirv::Target& target);

// Reads the translation of |ptx| for |target| from |path|. False on a miss, with the reason in
// |why|; |out| is then unspecified.
bool read_ptx_cache(const std::string& path, std::string_view ptx, const ptx_spirv::Target& target,
                    ptx_spirv::Translation* out, std::string* why);

inline constexpr uint64_t kPtxCacheBudgetBytes = uint64_t{256} << 20;

// Writes |translation| of |ptx| for |target| to |path| (replacing what was there), creating the
// directory if needed, then prunes the directory to kPtxCacheBudgetBytes.
void write_ptx_cache(const std::string& path, std::string_view ptx, const ptx_spirv::Target& target,
                     const ptx_spirv::Translation& translation);

// Removes the least recently used cache files of |directory| (only the cache's own
// "<hash>.bin" files) while they take more than |budget_bytes|, down to three quarters of it.
// Failures are ignored: files another process removed meanwhile are simply gone.
void prune_ptx_cache(const std::string& directory, uint64_t budget_bytes);

}  // namespace hal::vulkan
