// A block-wide sum repeated |rounds| times in a loop of barriers (area MemoryModel). Block 256.
// Round r: thread t writes v = (g * 0x9E3779B1) ^ (r * 0x85EBCA77) (g = workgroup * 256 + t) to
// s[t]; a barrier; a tree of halving strides, each step followed by a barrier, sums s[] into
// s[0] (mod 2^32); thread (r * 37) % 256, which changes from round to round, copies s[0] to
// out[workgroup * rounds + r]; a barrier ends the round before the next one writes s[].
#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint rounds; };
shared uint s[256];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.x * 256u + t;
  for (uint r = 0u; r < rounds; ++r) {
    s[t] = (g * 0x9E3779B1u) ^ (r * 0x85EBCA77u);
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1) {
      if (t < stride) s[t] += s[t + stride];
      barrier();
    }
    if (t == (r * 37u) % 256u) out_[gl_WorkGroupID.x * rounds + r] = s[0];
    barrier();
  }
}
