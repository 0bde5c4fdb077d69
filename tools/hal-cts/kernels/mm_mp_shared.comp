// Message passing between the threads of a workgroup through shared memory (area MemoryModel).
// Shared memory holds 16 slots of 64 words of data and 64 flags; step i uses slot i % 16, and
// every 16 steps a barrier ends the round, so no read races with a later write. In step i each
// thread t writes data = (i + 1) << 16 | t to its word of the slot, then (|mode| 1) a
// workgroup-scope release fence, then sets its flag to i + 1 atomically; it then reads the flag
// of thread q = (t + 32 + i % 32) % 64 atomically, at most |spins| times until it reads i + 1, and
// where it saw i + 1 makes an acquire fence (|mode| 1) and reads q's data word. |mode| 2: a
// barrier between the writes and the reads instead (the flag is read once and must be set), and
// another after the reads. |mode| 0: neither. result[2 * ((workgroup * iters + i) * 64 + t)] =
// 1 data seen, 2 stale data (the value read in the next word), 3 flag not seen.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Result { uint result[]; };
layout(push_constant) uniform Params {
  uint iters;
  uint mode;
  uint spins;
};
shared uint sdata[16 * 64];
shared uint sflag[16 * 64];
void main() {
  uint t = gl_LocalInvocationID.x;
  for (uint i = 0u; i < iters; ++i) {
    uint slot = (i % 16u) * 64u;
    sdata[slot + t] = ((i + 1u) << 16) | t;
    if (mode == 1u) memoryBarrierShared();
    atomicExchange(sflag[slot + t], i + 1u);
    if (mode == 2u) barrier();
    uint q = (t + 32u + i % 32u) % 64u;
    uint tries = mode == 2u ? 1u : spins;
    uint f = 0u;
    for (uint k = 0u; k < tries && f != i + 1u; ++k) f = atomicOr(sflag[slot + q], 0u);
    uint code = 3u;
    uint d = 0u;
    if (f == i + 1u) {
      if (mode == 1u) memoryBarrierShared();
      d = sdata[slot + q];
      code = d == (((i + 1u) << 16) | q) ? 1u : 2u;
    }
    uint r = 2u * ((gl_WorkGroupID.x * iters + i) * 64u + t);
    result[r] = code;
    result[r + 1u] = d;
    if (mode == 2u || i % 16u == 15u) barrier();
  }
}
