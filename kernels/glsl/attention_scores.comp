#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention_scores_{f32,f16}(Q, K, S, batch_heads, seq_q, seq_kv, head_dim, scale, causal):
// S[h, i, j] = scale * dot(Q[h, i, :], K[h, j, :]) over Q [batch_heads, seq_q, head_dim],
// K [batch_heads, seq_kv, head_dim]; S [batch_heads, seq_q, seq_kv] is always fp32. With causal
// != 0, key j is visible to query i when j <= i + seq_kv - seq_q (aligned to the last key);
// hidden entries are -inf. Block 16x16; grid (ceil(seq_kv/16), ceil(seq_q/16), batch_heads).
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer Q_ { ELEM q[]; };
layout(set = 0, binding = 1) readonly buffer K_ { ELEM k[]; };
layout(set = 0, binding = 2) writeonly buffer S_ { float s[]; };
layout(push_constant) uniform Params {
  uint batch_heads, seq_q, seq_kv, head_dim;
  float scale;
  uint causal;
} p;
void main() {
  uint j = gl_GlobalInvocationID.x;
  uint i = gl_GlobalInvocationID.y;
  uint h = gl_WorkGroupID.z;
  if (i >= p.seq_q || j >= p.seq_kv || h >= p.batch_heads) return;
  float v = NEG_INF;
  if (p.causal == 0 || int(j) <= int(i) + int(p.seq_kv) - int(p.seq_q)) {
    uint qb = (h * p.seq_q + i) * p.head_dim;
    uint kb = (h * p.seq_kv + j) * p.head_dim;
    float acc = 0.0;
    for (uint d = 0; d < p.head_dim; ++d) acc += LOAD(q[qb + d]) * LOAD(k[kb + d]);
    v = acc * p.scale;
  }
  s[(h * p.seq_q + i) * p.seq_kv + j] = v;
}
