// 32-bit float atomic add under contention (area MemoryModel). Each thread
// g = workgroup * 64 + thread adds, |iters| times, v = float(u & 15) * 0.25 + 0.25 with
// u = (g * 0x9E3779B1) ^ (i * 0x85EBCA77) to address g % addrs: of out[] (space 0) or of a shared
// array (space 1, set to 0 first and copied to out[workgroup * addrs + a] last). Every partial
// sum is a multiple of 0.25 below 2^22, so it is exact in any order and the final sums are exact.
#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { float out_[]; };
layout(push_constant) uniform Params {
  uint iters;
  uint addrs;
  uint space;
};
shared float s[8];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.x * 64u + t;
  uint a = g % addrs;
  if (space == 1u) {
    if (t < addrs) s[t] = 0.0;
    barrier();
  }
  for (uint i = 0u; i < iters; ++i) {
    float v = float(((g * 0x9E3779B1u) ^ (i * 0x85EBCA77u)) & 15u) * 0.25 + 0.25;
    if (space == 1u) {
      atomicAdd(s[a], v);
    } else {
      atomicAdd(out_[a], v);
    }
  }
  if (space == 1u) {
    barrier();
    if (t < addrs) out_[gl_WorkGroupID.x * addrs + t] = s[t];
  }
}
