// Message passing between workgroups through global memory (area MemoryModel). The first half
// of the grid produces, the second half consumes: per step i, slot
// s = (i * pairs + p) * 64 + thread for pair p. The producer writes data[s] = s + 1, then (with
// |fenced|) a device-scope release fence, then sets flag[s] atomically. The consumer reads the
// flag atomically at most |spins| times (no thread waits for another workgroup without bound)
// and, where it saw the flag, makes an acquire fence (with |fenced|) and reads data[s]:
// result[2s] = 1 data seen, 2 stale data (with the value read in result[2s + 1]), 3 flag not seen.
// Each slot is written once per launch, so no read races with a write it is not ordered after.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) coherent buffer Data { uint data[]; };
layout(set = 0, binding = 1) coherent buffer Flag { uint flag[]; };
layout(set = 0, binding = 2) buffer Result { uint result[]; };
layout(push_constant) uniform Params {
  uint iters;
  uint fenced;
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
      if (fenced != 0u) memoryBarrierBuffer();
      atomicExchange(flag[s], 1u);
    } else {
      uint f = 0u;
      for (uint k = 0u; k < spins && f == 0u; ++k) f = atomicOr(flag[s], 0u);
      uint code = 3u;
      uint d = 0u;
      if (f != 0u) {
        if (fenced != 0u) memoryBarrierBuffer();
        d = data[s];
        code = d == s + 1u ? 1u : 2u;
      }
      result[2u * s] = code;
      result[2u * s + 1u] = d;
    }
  }
}
