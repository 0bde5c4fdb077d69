// The handle table: every public handle value maps to a live runtime object.
//
// Why a table rather than casting handles to pointers: a destroyed, forged or garbage handle
// must be answered with HAL_ERROR_INVALID_HANDLE, never dereferenced. Handle values come from a
// 64-bit counter and are never reused, so a stale handle cannot alias a newer object. Lookups
// return shared ownership, so an object destroyed by one thread stays valid for a call already
// using it on another.
//
// Thread-safety: all functions may be called concurrently.
#pragma once

#include <hal/hal.h>

#include <cstdint>
#include <memory>
#include <string>

namespace hal {

enum class HandleKind : uint8_t { kDevice = 1, kStream, kEvent, kModule, kFunction };
inline constexpr int kHandleKindCount = 6;  // indexes 1..5 are used, by HandleKind

const char* handle_kind_name(HandleKind kind);

// The number of live handles of each kind: registered and not yet unregistered. Counted as the
// table changes, so reading it is cheap; a snapshot taken under the table's lock.
struct HandleCounts {
  uint64_t live[kHandleKindCount] = {};
  uint64_t of(HandleKind kind) const { return live[static_cast<int>(kind)]; }
};
HandleCounts live_handle_counts();

struct Object {
  explicit Object(HandleKind k) : kind(k) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  const HandleKind kind;
  uint64_t handle = 0;  // its own handle value, set by register_handle
};

// Registers |object| and returns its new handle value (also stored in object->handle).
uint64_t register_handle(std::shared_ptr<Object> object);

// The live object of |kind| behind |handle|, or nullptr after hal::fail(INVALID_HANDLE, ...)
// with a message naming |what| (for instance "stream") and why the handle is not valid.
std::shared_ptr<Object> find_handle(uint64_t handle, HandleKind kind, const char* what);

// Removes |handle| and returns its object (nullptr + fail() as find_handle). Only the first of
// several concurrent removals of one handle succeeds: a double destroy is INVALID_HANDLE.
std::shared_ptr<Object> unregister_handle(uint64_t handle, HandleKind kind, const char* what);

template <typename T>
std::shared_ptr<T> find_as(const void* handle, HandleKind kind, const char* what) {
  return std::static_pointer_cast<T>(find_handle(reinterpret_cast<uintptr_t>(handle), kind, what));
}

template <typename Handle>
Handle to_handle(uint64_t value) {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
}

}  // namespace hal
