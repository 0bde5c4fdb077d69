#version 450
// Runs until the host sets |flag|, for the tests of frees that must not wait for running work.
// Each invocation polls the flag at most |rounds| times (an atomic read, which the compiler can
// neither hoist out of the loop nor merge), then counts itself in seen[1], and in seen[0] when
// it saw the flag, and writes |victim|, memory the test frees while the kernel runs. The bound
// keeps a kernel whose flag is never set finite: a test that would otherwise hang fails instead.
// lavapipe stops a loop after 65535 iterations, so |rounds| stays below that and a long run
// comes from many workgroups, each of which leaves after one poll once the flag is set.
// 32 invocations fill lavapipe's SIMD lanes (8 or 16 of them): lanes beyond a workgroup's
// invocations skip the atomic, see 0, and would keep the loop going to the bound.
// Parameters: flag, seen, victim (pointers), rounds (value).
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Flag { uint flag; };
layout(set = 0, binding = 1) buffer Seen { uint seen[2]; };
layout(set = 0, binding = 2) buffer Victim { uint victim[]; };
layout(push_constant) uniform Params { uint rounds; };
void main() {
  uint set = 0u;
  for (uint i = 0u; i < rounds && set == 0u; ++i) set = atomicOr(flag, 0u);
  if (set != 0u) atomicAdd(seen[0], 1u);
  atomicAdd(seen[1], 1u);
  victim[0] = 1u;
}
