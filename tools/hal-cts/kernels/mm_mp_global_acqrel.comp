// Message passing between workgroups through global memory with a release store and an acquire
// load of the flag, in the Vulkan memory model (area MemoryModel). The slots, values and results
// are those of mm_mp_global.comp, always ordered: the producer writes data[s] = s + 1 and stores
// the flag with release semantics (making the buffer's writes available); the consumer loads the
// flag with acquire semantics (making them visible) at most |spins| times and, where it saw the
// flag, reads data[s]. Queue-family scope, so the device needs no vulkanMemoryModelDeviceScope.
#version 450
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) nonprivate buffer Data { uint data[]; };
layout(set = 0, binding = 1) buffer Flag { uint flag[]; };
layout(set = 0, binding = 2) buffer Result { uint result[]; };
layout(push_constant) uniform Params {
  uint iters;
  uint spins;
};
void main() {
  uint pairs = gl_NumWorkGroups.x / 2u;
  uint w = gl_WorkGroupID.x;
  bool producer = w < pairs;
  uint p = producer ? w : w - pairs;
  for (uint i = 0u; i < iters; ++i) {
    uint s = (i * pairs + p) * 64u + gl_LocalInvocationID.x;
    if (producer) {
      data[s] = s + 1u;
      atomicStore(flag[s], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                  gl_SemanticsRelease | gl_SemanticsMakeAvailable);
    } else {
      uint f = 0u;
      for (uint k = 0u; k < spins && f == 0u; ++k) {
        f = atomicLoad(flag[s], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                       gl_SemanticsAcquire | gl_SemanticsMakeVisible);
      }
      uint code = 3u;
      uint d = 0u;
      if (f != 0u) {
        d = data[s];
        code = d == s + 1u ? 1u : 2u;
      }
      result[2u * s] = code;
      result[2u * s + 1u] = d;
    }
  }
}
