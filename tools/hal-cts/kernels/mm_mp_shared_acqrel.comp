// Message passing between the threads of a workgroup through shared memory with a release store
// and an acquire load of the flag, in the Vulkan memory model (area MemoryModel). Slots, steps,
// values and results are those of mm_mp_shared.comp in its fenced form: thread t writes its data
// word, stores its flag i + 1 with workgroup-scope release semantics, and loads thread q's flag
// with acquire semantics at most |spins| times; where it saw i + 1 it reads q's data word.
#version 450
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Result { uint result[]; };
layout(push_constant) uniform Params {
  uint iters;
  uint spins;
};
shared uint sdata[16 * 64];
shared uint sflag[16 * 64];
void main() {
  uint t = gl_LocalInvocationID.x;
  for (uint i = 0u; i < iters; ++i) {
    uint slot = (i % 16u) * 64u;
    sdata[slot + t] = ((i + 1u) << 16) | t;
    atomicStore(sflag[slot + t], i + 1u, gl_ScopeWorkgroup, gl_StorageSemanticsShared,
                gl_SemanticsRelease | gl_SemanticsMakeAvailable);
    uint q = (t + 32u + i % 32u) % 64u;
    uint f = 0u;
    for (uint k = 0u; k < spins && f != i + 1u; ++k) {
      f = atomicLoad(sflag[slot + q], gl_ScopeWorkgroup, gl_StorageSemanticsShared,
                     gl_SemanticsAcquire | gl_SemanticsMakeVisible);
    }
    uint code = 3u;
    uint d = 0u;
    if (f == i + 1u) {
      d = sdata[slot + q];
      code = d == (((i + 1u) << 16) | q) ? 1u : 2u;
    }
    uint r = 2u * ((gl_WorkGroupID.x * iters + i) * 64u + t);
    result[r] = code;
    result[r + 1u] = d;
    if (i % 16u == 15u) barrier();
  }
}
