#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention_pv_{f32,f16}(P, V, O, batch_heads, seq_q, seq_kv, head_dim):
// O[h, i, d] = sum_j P[h, i, j] * V[h, j, d], with P [batch_heads, seq_q, seq_kv] fp32 (the
// softmax of the scores), V [batch_heads, seq_kv, head_dim] and O [batch_heads, seq_q, head_dim].
// Block 16x16; grid (ceil(head_dim/16), ceil(seq_q/16), batch_heads).
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer P_ { float pm[]; };
layout(set = 0, binding = 1) readonly buffer V_ { ELEM v[]; };
layout(set = 0, binding = 2) writeonly buffer O_ { ELEM o[]; };
layout(push_constant) uniform Params { uint batch_heads, seq_q, seq_kv, head_dim; } p;
void main() {
  uint d = gl_GlobalInvocationID.x;
  uint i = gl_GlobalInvocationID.y;
  uint h = gl_WorkGroupID.z;
  if (i >= p.seq_q || d >= p.head_dim || h >= p.batch_heads) return;
  uint pb = (h * p.seq_q + i) * p.seq_kv;
  uint vb = h * p.seq_kv * p.head_dim + d;
  float acc = 0.0;
  for (uint j = 0; j < p.seq_kv; ++j) acc += pm[pb + j] * LOAD(v[vb + j * p.head_dim]);
  o[(h * p.seq_q + i) * p.head_dim + d] = STORE(acc);
}
