#include "common/handles.h"

#include "common/error.h"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace hal {
namespace {

constexpr uint64_t kHandleTag = 0x4841ull << 48;  // "HA"

struct Table {
  std::shared_mutex mutex;
  std::unordered_map<uint64_t, std::shared_ptr<Object>> objects;
  uint64_t next = 1;
  HandleCounts counts;
};

Table& table() {
  // Leaked on purpose: handles may be used from other static destructors at exit.
  static Table* instance = new Table();
  return *instance;
}

hal_status describe_miss(uint64_t handle, const Object* other, const char* what) {
  if (handle == 0) {
    return failf(HAL_ERROR_INVALID_HANDLE, "the {} handle is NULL. Pass a handle returned by hal",
                 what);
  }
  if (other != nullptr) {
    return failf(HAL_ERROR_INVALID_HANDLE,
                 "handle {:#x} is of kind '{}', not '{}'. Check the order of the arguments", handle,
                 handle_kind_name(other->kind), what);
  }
  return failf(HAL_ERROR_INVALID_HANDLE,
               "{} handle {:#x} is not live: it was destroyed, never created by hal, or its "
               "owner (module) was unloaded",
               what, handle);
}

}  // namespace

const char* handle_kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::kDevice:
      return "device";
    case HandleKind::kStream:
      return "stream";
    case HandleKind::kEvent:
      return "event";
    case HandleKind::kModule:
      return "module";
    case HandleKind::kFunction:
      return "function";
  }
  return "object";
}

uint64_t register_handle(std::shared_ptr<Object> object) {
  Table& t = table();
  std::unique_lock lock(t.mutex);
  // The top 16 bits are a fixed tag, so small integers, ordinary pointers and most garbage can
  // never be live handles; the low 4 bits carry the kind, which helps in a debugger.
  const uint64_t value = kHandleTag | (t.next++ << 4) | static_cast<uint64_t>(object->kind);
  object->handle = value;
  ++t.counts.live[static_cast<int>(object->kind)];
  t.objects.emplace(value, std::move(object));
  return value;
}

std::shared_ptr<Object> find_handle(uint64_t handle, HandleKind kind, const char* what) {
  Table& t = table();
  std::shared_lock lock(t.mutex);
  auto it = t.objects.find(handle);
  if (it != t.objects.end() && it->second->kind == kind) return it->second;
  describe_miss(handle, it == t.objects.end() ? nullptr : it->second.get(), what);
  return nullptr;
}

std::shared_ptr<Object> unregister_handle(uint64_t handle, HandleKind kind, const char* what) {
  Table& t = table();
  std::unique_lock lock(t.mutex);
  auto it = t.objects.find(handle);
  if (it != t.objects.end() && it->second->kind == kind) {
    std::shared_ptr<Object> object = std::move(it->second);
    t.objects.erase(it);
    --t.counts.live[static_cast<int>(kind)];
    return object;
  }
  describe_miss(handle, it == t.objects.end() ? nullptr : it->second.get(), what);
  return nullptr;
}

HandleCounts live_handle_counts() {
  Table& t = table();
  std::shared_lock lock(t.mutex);
  return t.counts;
}

}  // namespace hal
