// The tables that turn a handle a program passes in (CUstream, CUevent, CUmodule, CUfunction)
// back into the object, so that a NULL, destroyed or garbage handle is refused with
// CUDA_ERROR_INVALID_HANDLE instead of being dereferenced.
//
// A handle's value is the object's address. Lookups hand out shared ownership, so an object that
// another thread destroys meanwhile stays valid until the caller is done with it.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace hal::ptx_cpu {

class Event;
class Function;
class Module;
class Stream;

template <typename T>
class HandleTable {
 public:
  void add(const std::shared_ptr<T>& object) {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_[object.get()] = object;
  }

  // The object whose handle is |handle|, or nullptr.
  std::shared_ptr<T> find(const void* handle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(handle);
    return it != objects_.end() ? it->second : nullptr;
  }

  // Takes the object out of the table (its handle becomes invalid); nullptr when it was not in.
  std::shared_ptr<T> remove(const void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(handle);
    if (it == objects_.end()) return nullptr;
    std::shared_ptr<T> object = std::move(it->second);
    objects_.erase(it);
    return object;
  }

  // Takes out every object for which |predicate| holds.
  template <typename Predicate>
  std::vector<std::shared_ptr<T>> remove_if(Predicate predicate) {
    std::vector<std::shared_ptr<T>> removed;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = objects_.begin(); it != objects_.end();) {
      if (predicate(*it->second)) {
        removed.push_back(std::move(it->second));
        it = objects_.erase(it);
      } else {
        ++it;
      }
    }
    return removed;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const void*, std::shared_ptr<T>> objects_;
};

// The process-wide tables; never destroyed (worker threads may still use them at exit).
HandleTable<Stream>& stream_handles();
HandleTable<Event>& event_handles();
HandleTable<Module>& module_handles();
HandleTable<Function>& function_handles();

}  // namespace hal::ptx_cpu
