#include "plan.h"

#include <hal_kernels/hal_kernels.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

namespace hal_kernels::tune {
namespace {

uint64_t fnv1a(uint64_t hash, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(uint64_t value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%0*llx", digits, static_cast<unsigned long long>(value));
  return text;
}

// Each database file as last read, by path: read again only when the file changes (hal-tune ran
// meanwhile), so a corrupt or stale file is reported once, not on every plan.
struct Cached {
  bool exists = false;
  std::filesystem::file_time_type mtime;
  uintmax_t size = 0;
  Database db;
};
std::mutex g_mutex;
std::map<std::string, Cached>& cache() {
  static auto* instance = new std::map<std::string, Cached>();  // leaked: usable at exit
  return *instance;
}

bool same_key(const DeviceKey& a, const DeviceKey& b) {
  return a.backend == b.backend && a.device_uuid == b.device_uuid && a.driver == b.driver &&
         a.hal_version == b.hal_version && a.pack_hash == b.pack_hash;
}

// The database at |path| for |key|, as a copy (the cache may be refreshed by another thread).
Database read_database(const std::string& path, const DeviceKey& key) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  const auto mtime =
      exists ? std::filesystem::last_write_time(path, ec) : std::filesystem::file_time_type();
  const uintmax_t size = exists ? std::filesystem::file_size(path, ec) : 0;
  std::lock_guard lock(g_mutex);
  auto it = cache().find(path);
  if (it == cache().end() || it->second.exists != exists || it->second.mtime != mtime ||
      it->second.size != size || !same_key(it->second.db.key(), key)) {
    Cached fresh;
    fresh.exists = exists;
    fresh.mtime = mtime;
    fresh.size = size;
    std::string warning;
    fresh.db = Database::load(path, key, &warning);
    if (!warning.empty()) std::fprintf(stderr, "hal: %s\n", warning.c_str());
    it = cache().insert_or_assign(path, std::move(fresh)).first;
  }
  return it->second.db;
}

// The distance between two buckets of one family: the sum over dimensions of |log2 a - log2 b|;
// infinite when they do not parse or differ in rank.
double bucket_distance(const std::string& a, const std::string& b) {
  auto dims = [](const std::string& text) {
    std::vector<double> out;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t x = text.find('x', start);
      const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
      char* end = nullptr;
      const double value = std::strtod(part.c_str(), &end);
      if (part.empty() || end == nullptr || *end != '\0' || value <= 0)
        return std::vector<double>();
      out.push_back(std::log2(value));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    return out;
  };
  const std::vector<double> da = dims(a), db = dims(b);
  if (da.empty() || da.size() != db.size()) return INFINITY;
  double sum = 0;
  for (size_t i = 0; i < da.size(); ++i) sum += std::fabs(da[i] - db[i]);
  return sum;
}

}  // namespace

std::string pack_hash() {
  uint64_t hash = 0xcbf29ce484222325ull;
  size_t size = 0;
  const char* manifest = hal_kernels_manifest(&size);
  hash = fnv1a(hash, manifest, size);
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* info = hal_kernels_get(i);
    for (hal_ir ir : {HAL_IR_SPIRV, HAL_IR_PTX}) {
      if (const hal_kernel_blob* blob = hal_kernels_find(info->name, ir)) {
        hash = fnv1a(hash, blob->data, blob->size);
      }
    }
  }
  return hex(hash, 16);
}

bool device_key(hal_device device, DeviceKey* key, std::string* why) {
  hal_device_info info{};
  info.struct_size = sizeof(info);
  const hal_status s = hal_device_get_info(device, &info);
  if (s != HAL_SUCCESS) {
    *why = std::string("hal_device_get_info failed: ") + hal_last_error();
    return false;
  }
  key->backend = info.backend_name;
  key->device_uuid.clear();
  for (uint8_t byte : info.uuid) key->device_uuid += hex(byte, 2);
  key->driver = std::string(info.driver_name) + " " + info.driver_info + " api " +
                std::to_string(info.api_version);
  for (char& c : key->driver) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const uint32_t v = hal_version();
  key->hal_version = std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
                     std::to_string(v & 0xff);
  key->pack_hash = pack_hash();
  return true;
}

namespace {

// The candidate to launch for |bucket| of |family|, among |candidates| (one is_default), from the
// database in |directory_in| (nullptr: default_directory()); *source says where it came from.
const Candidate* choose(hal_device device, const std::string& family,
                        const std::vector<Candidate>& candidates, const std::string& bucket,
                        const std::string* directory_in, std::string* source) {
  const Candidate* chosen = nullptr;
  for (const Candidate& c : candidates) {
    if (c.is_default) chosen = &c;
  }
  *source = "the default: no tuning database entry for " + family;

  DeviceKey key;
  std::string key_why;
  const std::string directory = directory_in != nullptr ? *directory_in : default_directory();
  if (directory.empty()) {
    *source = "the default: no cache directory (set HAL_CACHE_DIR)";
    return chosen;
  }
  if (!device_key(device, &key, &key_why)) return chosen;
  const Database db = read_database(path_for(directory, key), key);
  const Entry* entry = db.find(family, bucket);
  if (entry == nullptr) {
    double best = INFINITY;
    for (const Entry& e : db.entries()) {
      if (e.family != family) continue;
      const double d = bucket_distance(e.bucket, bucket);
      if (d < best) {
        best = d;
        entry = &e;
      }
    }
  }
  if (entry == nullptr) {
    if (!db.entries().empty()) {
      *source = "the default: the tuning database has no entry for " + family;
    }
    return chosen;
  }
  // The variant, by its label: SPIR-V variants of one pack family may come from any of its
  // kernels, whose constants they override, and a nearest bucket may have another head dim.
  for (const Candidate& c : candidates) {
    if (c.label != entry->label) continue;
    char speedup[64];
    std::snprintf(speedup, sizeof(speedup), "%.2fx",
                  entry->time_ms > 0 ? entry->default_time_ms / entry->time_ms : 0.0);
    *source = "tuned by hal-tune for " + entry->bucket +
              (entry->bucket == bucket ? "" : " (the nearest tuned shape)") + ", " + speedup +
              " the default there";
    return &c;
  }
  *source = "the default: the database's choice for " + family + " (" + entry->label +
            ") is not a candidate on this device";
  return chosen;
}

void fill_plan(const Candidate& chosen, const std::string& source, LaunchPlan* out) {
  out->kernel = chosen.kernel;
  out->ir = chosen.ir;
  out->blob = chosen.blob;
  out->blob_size = chosen.blob_size;
  out->specializations = chosen.specializations;
  for (int d = 0; d < 3; ++d) out->block[d] = chosen.block[d];
  out->shared_bytes = chosen.shared_bytes;
  out->tuned = source.rfind("tuned", 0) == 0;
  out->label = chosen.label;
  out->source = source;
}

bool read_info(hal_device device, hal_device_info* info, std::string* why) {
  *info = {};
  info->struct_size = sizeof(*info);
  if (hal_device_get_info(device, info) != HAL_SUCCESS) {
    *why = std::string("hal_device_get_info failed: ") + hal_last_error();
    return false;
  }
  return true;
}

}  // namespace

bool plan_matmul(hal_device device, const std::string& family, MatmulShape shape, LaunchPlan* out,
                 std::string* why, const std::string* directory) {
  hal_device_info info;
  if (!read_info(device, &info, why)) return false;
  const std::vector<Candidate> candidates = matmul_candidates(info, family, why);
  if (candidates.empty()) return false;
  std::string source;
  const Candidate* chosen = choose(device, family, candidates,
                                   shape_bucket({shape.m, shape.n, shape.k}), directory, &source);
  fill_plan(*chosen, source, out);
  out->grid[0] = (shape.n + chosen->tile[1] - 1) / chosen->tile[1];
  out->grid[1] = (shape.m + chosen->tile[0] - 1) / chosen->tile[0];
  out->grid[2] = 1;
  return true;
}

bool plan_attention(hal_device device, const std::string& family, const AttentionShape& shape,
                    LaunchPlan* out, std::string* why, const std::string* directory) {
  hal_device_info info;
  if (!read_info(device, &info, why)) return false;
  const std::vector<Candidate> candidates = attention_candidates(info, family, shape.head_dim, why);
  if (candidates.empty()) return false;
  std::string source;
  const Candidate* chosen =
      choose(device, family, candidates, attention_bucket(shape), directory, &source);
  fill_plan(*chosen, source, out);
  attention_grid(*chosen, shape, out->grid);
  return true;
}

hal_status load_plan(hal_device device, const LaunchPlan& plan, hal_module* module,
                     hal_function* function) {
  std::vector<hal_specialization> specs;
  for (const Specialization& s : plan.specializations) specs.push_back({s.id, 4, &s.value});
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.ir = plan.ir;
  options.specialization_count = static_cast<uint32_t>(specs.size());
  options.specializations = specs.empty() ? nullptr : specs.data();
  hal_status s = hal_module_load(device, plan.blob, plan.blob_size, &options, module);
  if (s != HAL_SUCCESS) return s;
  s = hal_module_get_function(*module, plan.kernel.c_str(), function);
  if (s != HAL_SUCCESS) {
    hal_module_unload(*module);
    *module = nullptr;
  }
  return s;
}

}  // namespace hal_kernels::tune
