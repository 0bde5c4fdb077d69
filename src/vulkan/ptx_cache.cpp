#include "vulkan/ptx_cache.h"

#include "common/log.h"
#include "vulkan/cache_file.h"

#include <hal/hal.h>

#include <fmt/format.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

namespace hal::vulkan {
namespace {

constexpr char kMagic[8] = {'H', 'A', 'L', 'P', 'T', 'X', 'S', 'V'};
constexpr uint32_t kFormatVersion = 4;  // 2: the refused kernels; 3: params_in_buffer; 4: warps
// A refused kernel's name or reason is at most this long in a file (reasons are a line or two).
constexpr uint32_t kMaxReasonBytes = 1u << 16;
constexpr size_t kChecksumSize = 8;
// No translation comes near this; a larger file is not read into memory at all.
constexpr uintmax_t kMaxPayloadBytes = uintmax_t{1} << 30;

void put_bytes(std::vector<uint8_t>* out, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

// Reads little-endian fields from [at, end); any read past the end fails the reader for good.
class Reader {
 public:
  Reader(const uint8_t* at, const uint8_t* end) : at_(at), end_(end) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == end_; }

  uint64_t get(int count) {
    const uint8_t* p = bytes(static_cast<uint64_t>(count));
    if (p == nullptr) return 0;
    uint64_t value = 0;
    for (int i = 0; i < count; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
    return value;
  }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  // |count| bytes, or nullptr when fewer remain.
  const uint8_t* bytes(uint64_t count) {
    if (count > static_cast<uint64_t>(end_ - at_)) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* start = at_;
    at_ += count;
    return start;
  }

 private:
  const uint8_t* at_;
  const uint8_t* end_;
  bool ok_ = true;
};

// The GNU build id of the loaded object holding this code (the driver module, or a program that
// links the driver statically): it changes whenever the code does, which hal's version alone
// does not between two builds of one version.
struct BuildIdSearch {
  uintptr_t address = 0;
  std::string id;
};

int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  bool holds = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && search->address >= start &&
        search->address - start < segment.p_memsz) {
      holds = true;
    }
  }
  if (!holds) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    // Notes are padded to their segment's alignment (4, or 8 for some toolchains).
    const size_t align = segment.p_align == 8 ? 8 : 4;
    const auto pad = [align](size_t n) { return (n + align - 1) / align * align; };
    const auto* at = reinterpret_cast<const uint8_t*>(info->dlpi_addr + segment.p_vaddr);
    const uint8_t* end = at + segment.p_memsz;
    while (end - at >= 12) {
      uint32_t name_size, desc_size, type;
      std::memcpy(&name_size, at, 4);
      std::memcpy(&desc_size, at + 4, 4);
      std::memcpy(&type, at + 8, 4);
      const uint8_t* name = at + 12;
      if (pad(name_size) > static_cast<size_t>(end - name)) break;
      const uint8_t* desc = name + pad(name_size);
      if (pad(desc_size) > static_cast<size_t>(end - desc)) break;
      constexpr uint32_t kNtGnuBuildId = 3;
      if (type == kNtGnuBuildId && name_size == 4 && std::memcmp(name, "GNU", 4) == 0) {
        search->id.assign(reinterpret_cast<const char*>(desc), desc_size);
        return 1;
      }
      at = desc + pad(desc_size);
    }
  }
  return 1;  // the object holding the code, without a build id
}

const std::string& build_id() {
  static const std::string id = [] {
    BuildIdSearch search;
    search.address = reinterpret_cast<uintptr_t>(&find_build_id);
    dl_iterate_phdr(find_build_id, &search);
    return search.id;
  }();
  return id;
}

// The bytes every file for this key starts with.
std::vector<uint8_t> key_bytes(std::string_view ptx, const ptx_spirv::Target& target) {
  std::vector<uint8_t> key(kMagic, kMagic + sizeof(kMagic));
  put(&key, kFormatVersion, 4);
  put(&key, HAL_VERSION, 4);
  const std::string& id = build_id();
  put(&key, id.size(), 4);
  put_bytes(&key, id.data(), id.size());
  for (bool flag : {target.float64, target.int16, target.int8, target.float16,
                    target.storage_buffer_8bit, target.storage_buffer_16bit, target.int64_atomics,
                    target.float32_atomic_add, target.warp32}) {
    put(&key, flag ? 1 : 0, 1);
  }
  put(&key, target.max_push_constant_bytes, 4);
  put(&key, target.max_shared_bytes, 4);
  // The refusals of warp kernels quote it.
  put(&key, target.no_warp32.size(), 4);
  put_bytes(&key, target.no_warp32.data(), target.no_warp32.size());
  put(&key, ptx.size(), 8);
  put_bytes(&key, ptx.data(), ptx.size());
  return key;
}

// The translation after the key, as far as the file's own structure goes; the caller checks it
// against the module.
bool parse_payload(Reader& in, ptx_spirv::Translation* out, std::string* why) {
  const uint32_t kernels = in.u32();
  if (kernels > ptx::ir::kMaxFunctions) {
    *why = fmt::format("{} kernels is more than PTX allows", kernels);
    return false;
  }
  out->kernels.clear();
  for (uint32_t k = 0; k < kernels && in.ok(); ++k) {
    ptx_spirv::KernelInfo& info = out->kernels.emplace_back();
    const uint32_t name_size = in.u32();
    if (name_size > ptx::ir::kMaxIdentifierLength) {
      *why = fmt::format("kernel {} has a name of {} bytes", k, name_size);
      return false;
    }
    const uint8_t* name = in.bytes(name_size);
    if (name != nullptr) info.name.assign(reinterpret_cast<const char*>(name), name_size);
    info.param_bytes = in.u32();
    info.params_in_buffer = in.get(1) != 0;
    const uint32_t params = in.u32();
    if (params > ptx::ir::kMaxParams) {
      *why = fmt::format("kernel {} has {} parameters", k, params);
      return false;
    }
    for (uint32_t p = 0; p < params && in.ok(); ++p) info.param_offsets.push_back(in.u32());
    info.static_shared_bytes = in.u32();
    info.dynamic_shared = in.get(1) != 0;
    for (uint32_t& dimension : info.reqntid) dimension = in.u32();
    info.maxntid = in.u32();
    info.warp_size = in.u32();
  }
  const uint32_t refused = in.u32();
  if (refused > ptx::ir::kMaxFunctions) {
    *why = fmt::format("{} refused kernels is more than PTX allows", refused);
    return false;
  }
  out->refused.clear();
  for (uint32_t k = 0; k < refused && in.ok(); ++k) {
    ptx_spirv::RefusedKernel& kernel = out->refused.emplace_back();
    for (std::string* text : {&kernel.name, &kernel.reason}) {
      const uint32_t size = in.u32();
      if (size > kMaxReasonBytes) {
        *why = fmt::format("refused kernel {} has a text of {} bytes", k, size);
        return false;
      }
      const uint8_t* bytes = in.bytes(size);
      if (bytes != nullptr) text->assign(reinterpret_cast<const char*>(bytes), size);
    }
  }
  const uint64_t words = in.get(8);
  const uint8_t* data = words <= UINT64_MAX / 4 ? in.bytes(words * 4) : nullptr;
  if (data == nullptr || !in.done()) {
    *why = "its contents do not match its own layout (corrupt)";
    return false;
  }
  out->words.resize(words);
  for (uint64_t i = 0; i < words; ++i) {
    const uint8_t* w = data + 4 * i;
    out->words[i] =
        uint32_t{w[0]} | uint32_t{w[1]} << 8 | uint32_t{w[2]} << 16 | uint32_t{w[3]} << 24;
  }
  return true;
}

}  // namespace

std::string ptx_cache_path(const std::string& dir, std::string_view ptx,
                           const ptx_spirv::Target& target) {
  if (dir.empty()) return {};
  const std::vector<uint8_t> key = key_bytes(ptx, target);
  return fmt::format("{}/ptx-spirv/{:016x}.bin", dir, fnv1a(key.data(), key.size()));
}

bool read_ptx_cache(const std::string& path, std::string_view ptx, const ptx_spirv::Target& target,
                    ptx_spirv::Translation* out, std::string* why) {
  const std::vector<uint8_t> key = key_bytes(ptx, target);
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    *why = "no such file";
    return false;
  }
  if (size > key.size() + kMaxPayloadBytes) {
    *why = fmt::format("{} bytes is more than any translation", size);
    return false;
  }
  const std::vector<uint8_t> file = read_whole_file(path);
  if (file.size() < key.size() + kChecksumSize) {
    *why = fmt::format("{} bytes is too short for this key (truncated?)", file.size());
    return false;
  }
  const size_t body = file.size() - kChecksumSize;
  Reader checksum(file.data() + body, file.data() + file.size());
  if (checksum.get(8) != fnv1a(file.data(), body)) {
    *why = "checksum mismatch (corrupt or truncated)";
    return false;
  }
  if (std::memcmp(file.data(), key.data(), key.size()) != 0) {
    *why = "written for other PTX, another device's features, or another build of hal";
    return false;
  }
  Reader in(file.data() + key.size(), file.data() + body);
  if (!parse_payload(in, out, why)) return false;
  // A file in use is recent, whatever its age: pruning removes the least recently used.
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), error);
  return true;
}

void write_ptx_cache(const std::string& path, std::string_view ptx, const ptx_spirv::Target& target,
                     const ptx_spirv::Translation& translation) {
  std::vector<uint8_t> file = key_bytes(ptx, target);
  put(&file, translation.kernels.size(), 4);
  for (const ptx_spirv::KernelInfo& info : translation.kernels) {
    put(&file, info.name.size(), 4);
    put_bytes(&file, info.name.data(), info.name.size());
    put(&file, info.param_bytes, 4);
    put(&file, info.params_in_buffer ? 1 : 0, 1);
    put(&file, info.param_offsets.size(), 4);
    for (uint32_t offset : info.param_offsets) put(&file, offset, 4);
    put(&file, info.static_shared_bytes, 4);
    put(&file, info.dynamic_shared ? 1 : 0, 1);
    for (uint32_t dimension : info.reqntid) put(&file, dimension, 4);
    put(&file, info.maxntid, 4);
    put(&file, info.warp_size, 4);
  }
  put(&file, translation.refused.size(), 4);
  for (const ptx_spirv::RefusedKernel& kernel : translation.refused) {
    for (const std::string* text : {&kernel.name, &kernel.reason}) {
      const size_t size = std::min<size_t>(text->size(), kMaxReasonBytes);
      put(&file, size, 4);
      put_bytes(&file, text->data(), size);
    }
  }
  put(&file, translation.words.size(), 8);
  for (uint32_t word : translation.words) put(&file, word, 4);
  put(&file, fnv1a(file.data(), file.size()), 8);

  write_file_atomically(path, file, "PTX translation cache");
  prune_ptx_cache(std::filesystem::path(path).parent_path().string(), kPtxCacheBudgetBytes);
}

void prune_ptx_cache(const std::string& directory, uint64_t budget_bytes) {
  struct Entry {
    std::filesystem::path path;
    std::filesystem::file_time_type used;
    uintmax_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    // Only the cache's own files: "<16 hex digits>.bin".
    const std::string name = it->path().filename().string();
    if (name.size() != 20 || name.compare(16, 4, ".bin") != 0) continue;
    std::error_code stat_error;
    const uintmax_t size = it->file_size(stat_error);
    const auto used = it->last_write_time(stat_error);
    if (stat_error) continue;
    entries.push_back(Entry{it->path(), used, size});
    total += size;
  }
  if (total <= budget_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  // Down to three quarters of the budget, so that the next writes do not prune again at once.
  const uint64_t target = budget_bytes / 4 * 3;
  size_t removed = 0;
  for (const Entry& entry : entries) {
    if (total <= target) break;
    std::error_code remove_error;
    // Another process may have removed or replaced it: either way it is not counted again.
    if (std::filesystem::remove(entry.path, remove_error)) ++removed;
    total -= std::min<uint64_t>(total, entry.size);
  }
  hal::log()->debug("vulkan: pruned {} PTX translation(s) from {} (over {} bytes)", removed,
                    directory, budget_bytes);
}

}  // namespace hal::vulkan
