#include "ptx_cpu/handles.h"

#include "ptx_cpu/event.h"
#include "ptx_cpu/module.h"
#include "ptx_cpu/stream.h"

namespace hal::ptx_cpu {

// Leaked on purpose: see handles.h.
HandleTable<Stream>& stream_handles() {
  static auto* table = new HandleTable<Stream>();
  return *table;
}

HandleTable<Event>& event_handles() {
  static auto* table = new HandleTable<Event>();
  return *table;
}

HandleTable<Module>& module_handles() {
  static auto* table = new HandleTable<Module>();
  return *table;
}

HandleTable<Function>& function_handles() {
  static auto* table = new HandleTable<Function>();
  return *table;
}

}  // namespace hal::ptx_cpu
