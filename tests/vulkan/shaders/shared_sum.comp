#version 450
// Per-workgroup sums through shared memory sized by a specialization constant (in bytes):
// S[g] = sum of X[g * 32 .. g * 32 + 31].
layout(local_size_x = 32) in;
layout(constant_id = 7) const uint SHARED_BYTES = 4u;
shared uint tile[SHARED_BYTES / 4u];
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer S { uint s[]; };
void main() {
  uint l = gl_LocalInvocationID.x;
  tile[l] = x[gl_GlobalInvocationID.x];
  barrier();
  if (l == 0u) {
    uint total = 0u;
    for (uint k = 0u; k < 32u; ++k) total += tile[k];
    s[gl_WorkGroupID.x] = total;
  }
}
