#include "device_problem.h"

#include <hal_kernels/reference.h>

#include <algorithm>
#include <chrono>

namespace hal_kernels::tune {

namespace ref = hal_kernels::ref;

std::string status_text(const char* call, hal_status status) {
  return std::string(call) + " failed: " + hal_status_string(status) + ": " + hal_last_error();
}

std::vector<TunableValues> tunable_combinations(const hal_kernel_info& kernel) {
  std::vector<TunableValues> combos = {{}};
  for (uint32_t t = 0; t < kernel.tunable_count; ++t) {
    const hal_kernel_tunable& tunable = kernel.tunables[t];
    std::vector<uint32_t> values(tunable.allowed, tunable.allowed + tunable.allowed_count);
    if (values.empty()) values.push_back(tunable.value);
    std::vector<TunableValues> next;
    for (const TunableValues& combo : combos) {
      for (uint32_t value : values) {
        TunableValues extended = combo;
        extended.emplace_back(tunable.name, value);
        next.push_back(std::move(extended));
      }
    }
    combos = std::move(next);
  }
  return combos;
}

TunableValues tunable_defaults(const hal_kernel_info& kernel) {
  TunableValues out;
  for (uint32_t i = 0; i < kernel.tunable_count; ++i) {
    out.emplace_back(kernel.tunables[i].name, kernel.tunables[i].value);
  }
  return out;
}

uint32_t tunable_value(const TunableValues& values, const char* name) {
  for (const auto& [n, value] : values) {
    if (n == name) return value;
  }
  return 0;
}

std::vector<Specialization> specializations_for(const hal_kernel_info& kernel,
                                                const TunableValues& values) {
  std::vector<Specialization> out;
  for (uint32_t i = 0; i < kernel.tunable_count; ++i) {
    for (const auto& [name, value] : values) {
      if (name == kernel.tunables[i].name) out.push_back({kernel.tunables[i].spec_id, value});
    }
  }
  return out;
}

const hal_kernel_info& instance_for(const hal_kernel_info& kernel, const TunableValues& values) {
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* other = hal_kernels_get(i);
    if (std::string(other->family) == kernel.family && tunable_defaults(*other) == values) {
      return *other;
    }
  }
  return kernel;
}

void for_each_variant(
    const hal_device_info& info, hal_ir ir,
    const std::function<bool(const std::string& pack_family)>& in_family,
    const std::function<void(const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                             const TunableValues& values, bool specialise)>& add,
    bool* lacks_features) {
  std::vector<std::string> seen_pack_families;
  for (uint32_t i = 0; i < hal_kernels_count(); ++i) {
    const hal_kernel_info* k = hal_kernels_get(i);
    if (!in_family(k->family)) continue;
    if ((k->required_features & ~info.features) != 0) {
      *lacks_features = true;
      continue;
    }
    const hal_kernel_blob* blob = hal_kernels_find(k->name, ir);
    if (blob == nullptr) continue;
    if (ir == HAL_IR_PTX) {  // fixed tunables: each kernel is one variant
      add(*k, *blob, tunable_defaults(*k), false);
      continue;
    }
    // SPIR-V: one kernel per pack family suffices; its constants reach every allowed value.
    if (std::find(seen_pack_families.begin(), seen_pack_families.end(), k->family) !=
        seen_pack_families.end()) {
      continue;
    }
    seen_pack_families.push_back(k->family);
    for (const TunableValues& combo : tunable_combinations(*k)) {
      const hal_kernel_info& instance = instance_for(*k, combo);
      const hal_kernel_blob* instance_blob = hal_kernels_find(instance.name, ir);
      add(instance, instance_blob != nullptr ? *instance_blob : *blob, combo, true);
    }
  }
}

Candidate candidate_for(const hal_kernel_info& kernel, const hal_kernel_blob& blob,
                        const TunableValues& values, bool specialise) {
  Candidate c;
  c.kernel = kernel.name;
  c.ir = blob.ir;
  c.blob = blob.data;
  c.blob_size = blob.size;
  if (specialise) c.specializations = specializations_for(kernel, values);
  for (int d = 0; d < 3; ++d) c.block[d] = kernel.block[d];
  c.shared_bytes = kernel.shared_bytes;
  return c;
}

bool DeviceProblem::fail(std::string* why, const std::string& what) {
  if (why != nullptr) *why = what;
  return false;
}

bool DeviceProblem::open(hal_device device, bool f16, std::string* why) {
  device_ = device;
  f16_ = f16;
  hal_device_info info{};
  info.struct_size = sizeof(info);
  if (hal_status s = hal_device_get_info(device, &info); s != HAL_SUCCESS) {
    return fail(why, status_text("hal_device_get_info", s));
  }
  if (hal_status s = hal_stream_create(device, &stream_); s != HAL_SUCCESS) {
    return fail(why, status_text("hal_stream_create", s));
  }
  // Events time the runs where the device has timestamps.
  if ((info.features & HAL_FEATURE_TIMESTAMPS) != 0 &&
      hal_event_create(device, &start_) == HAL_SUCCESS &&
      hal_event_create(device, &end_) == HAL_SUCCESS) {
    events_ = true;
  }
  return true;
}

DeviceProblem::~DeviceProblem() {
  if (stream_ != nullptr) hal_stream_synchronize(stream_);
  for (auto& [candidate, loaded] : loaded_) {
    if (loaded.module != nullptr) hal_module_unload(loaded.module);
  }
  free_since(0);
  if (start_ != nullptr) hal_event_destroy(start_);
  if (end_ != nullptr) hal_event_destroy(end_);
  if (stream_ != nullptr) hal_stream_destroy(stream_);
}

bool DeviceProblem::alloc(size_t count, hal_deviceptr* out, std::string* why, size_t bytes_each) {
  const size_t element = bytes_each != 0 ? bytes_each : (f16_ ? 2 : 4);
  const hal_status s = hal_mem_alloc(device_, count * element, out);
  if (s != HAL_SUCCESS) {
    return fail(
        why, status_text("hal_mem_alloc", s) + " (" + std::to_string(count * element) + " bytes)");
  }
  allocations_.push_back(*out);
  return true;
}

void DeviceProblem::free_since(size_t mark) {
  // Work still queued may use them.
  if (stream_ != nullptr && allocations_.size() > mark) hal_stream_synchronize(stream_);
  while (allocations_.size() > mark) {
    hal_mem_free(device_, allocations_.back());
    allocations_.pop_back();
  }
}

bool DeviceProblem::upload(hal_deviceptr ptr, const std::vector<float>& host, std::string* why) {
  hal_status s;
  if (f16_) {
    const std::vector<uint16_t> half = ref::to_half(host);
    s = hal_memcpy_htod(stream_, ptr, half.data(), half.size() * 2);
  } else {
    s = hal_memcpy_htod(stream_, ptr, host.data(), host.size() * 4);
  }
  if (s == HAL_SUCCESS) s = hal_stream_synchronize(stream_);
  return s == HAL_SUCCESS || fail(why, status_text("uploading the inputs", s));
}

bool DeviceProblem::download(hal_deviceptr ptr, size_t count, std::vector<float>* host,
                             std::string* why) {
  hal_status s;
  if (f16_) {
    std::vector<uint16_t> half(count);
    s = hal_memcpy_dtoh(stream_, half.data(), ptr, count * 2);
    if (s == HAL_SUCCESS) s = hal_stream_synchronize(stream_);
    if (s == HAL_SUCCESS) *host = ref::from_half(half);
  } else {
    host->resize(count);
    s = hal_memcpy_dtoh(stream_, host->data(), ptr, count * 4);
    if (s == HAL_SUCCESS) s = hal_stream_synchronize(stream_);
  }
  return s == HAL_SUCCESS || fail(why, status_text("reading the result", s));
}

bool DeviceProblem::poison(hal_deviceptr ptr, size_t count, std::string* why) {
  // All bits set is a NaN in fp16 and in fp32.
  const hal_status s = hal_memset_d8(stream_, ptr, 0xff, count * (f16_ ? 2 : 4));
  return s == HAL_SUCCESS || fail(why, status_text("filling the output", s));
}

bool DeviceProblem::load(const Candidate& candidate, Loaded** out, std::string* why) {
  auto it = loaded_.find(&candidate);
  if (it != loaded_.end()) {
    *out = &it->second;
    return true;
  }
  std::vector<hal_specialization> specs;
  for (const Specialization& s : candidate.specializations) {
    specs.push_back({s.id, 4, &s.value});
  }
  hal_module_options options{};
  options.struct_size = sizeof(options);
  options.ir = candidate.ir;
  options.specialization_count = static_cast<uint32_t>(specs.size());
  options.specializations = specs.empty() ? nullptr : specs.data();
  Loaded loaded;
  hal_status s =
      hal_module_load(device_, candidate.blob, candidate.blob_size, &options, &loaded.module);
  if (s != HAL_SUCCESS) return fail(why, status_text("hal_module_load", s));
  s = hal_module_get_function(loaded.module, candidate.kernel.c_str(), &loaded.function);
  if (s != HAL_SUCCESS) {
    hal_module_unload(loaded.module);
    return fail(why, status_text("hal_module_get_function", s));
  }
  *out = &(loaded_[&candidate] = loaded);
  return true;
}

bool DeviceProblem::launch(const Candidate& candidate, const Loaded& loaded, const uint32_t grid[3],
                           void** args, std::string* why) {
  hal_launch_config config{};
  for (int d = 0; d < 3; ++d) {
    config.grid[d] = grid[d];
    config.block[d] = candidate.block[d];
  }
  config.shared_bytes = candidate.shared_bytes;
  const hal_status s = hal_launch(stream_, loaded.function, &config, args);
  return s == HAL_SUCCESS || fail(why, status_text("hal_launch", s));
}

bool DeviceProblem::time(const Candidate& candidate, uint32_t reps, std::vector<double>* ms,
                         std::string* why) {
  Loaded* loaded = nullptr;
  if (!load(candidate, &loaded, why)) return false;
  for (uint32_t r = 0; r < reps; ++r) {
    if (events_) {
      hal_status s = hal_event_record(start_, stream_);
      if (s != HAL_SUCCESS) return fail(why, status_text("hal_event_record", s));
      if (!run(candidate, *loaded, why)) return false;
      s = hal_event_record(end_, stream_);
      if (s == HAL_SUCCESS) s = hal_event_synchronize(end_);
      float elapsed = 0;
      if (s == HAL_SUCCESS) s = hal_event_elapsed_ms(start_, end_, &elapsed);
      if (s != HAL_SUCCESS) return fail(why, status_text("timing with events", s));
      ms->push_back(elapsed);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      if (!run(candidate, *loaded, why)) return false;
      const hal_status s = hal_stream_synchronize(stream_);
      if (s != HAL_SUCCESS) return fail(why, status_text("hal_stream_synchronize", s));
      ms->push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  return true;
}

}  // namespace hal_kernels::tune
