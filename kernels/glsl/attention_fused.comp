#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// attention_fused_{f32,f16}_d<D>(Q, K, V, O, batch_heads, seq_q, seq_kv, scale, causal):
// O = softmax(Q * K^T * scale, causal mask) * V in one pass with an online softmax: the score
// matrix is never written. Shapes and the causal rule as attention_scores/attention_pv, with
// head_dim = D. A workgroup of 128 invocations takes 16 query rows (8 invocations per row, each
// owning D/8 output columns, lane + 8*k) and walks the keys 16 at a time through shared memory,
// keeping a running maximum and sum per row. Rows with no visible key give 0.
// D is specialization constant 0 (64 or 128; the default comes from the build, -DHEAD_DIM).
// Block 128; grid (ceil(seq_q/16), batch_heads, 1).
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint D = HEAD_DIM;
const uint DP = D + 1;  // padded row stride of the shared tiles
const uint DL = D / 8;  // output columns per invocation
layout(set = 0, binding = 0) readonly buffer Q_ { ELEM q[]; };
layout(set = 0, binding = 1) readonly buffer K_ { ELEM k[]; };
layout(set = 0, binding = 2) readonly buffer V_ { ELEM v[]; };
layout(set = 0, binding = 3) writeonly buffer O_ { ELEM o[]; };
layout(push_constant) uniform Params {
  uint batch_heads, seq_q, seq_kv;
  float scale;
  uint causal;
} p;
shared float Qs[16 * DP];
shared float Ks[16 * DP];
shared float Vs[16 * D];
shared float Ss[16 * 16];
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint r = tid / 8;
  uint lane = tid % 8;
  uint q0 = gl_WorkGroupID.x * 16;
  uint h = gl_WorkGroupID.y;
  if (h >= p.batch_heads) return;
  uint i = q0 + r;
  int offset = int(p.seq_kv) - int(p.seq_q);
  for (uint idx = tid; idx < 16 * D; idx += 128) {
    uint rr = idx / D;
    uint d = idx % D;
    float val = 0.0;
    if (q0 + rr < p.seq_q) val = LOAD(q[(h * p.seq_q + q0 + rr) * D + d]);
    Qs[rr * DP + d] = val;
  }
  // Keys past kv_end are hidden from every row of this workgroup.
  uint kv_end = p.seq_kv;
  if (p.causal != 0) {
    int last = int(min(q0 + 15, p.seq_q - 1)) + offset + 1;
    kv_end = uint(clamp(last, 0, int(p.seq_kv)));
  }
  float m = NEG_INF;
  float l = 0.0;
  float acc[DL];
  for (uint c = 0; c < DL; ++c) acc[c] = 0.0;
  for (uint kv0 = 0; kv0 < kv_end; kv0 += 16) {
    for (uint idx = tid; idx < 16 * D; idx += 128) {
      uint j = idx / D;
      uint d = idx % D;
      float kval = 0.0;
      float vval = 0.0;
      if (kv0 + j < p.seq_kv) {
        uint g = (h * p.seq_kv + kv0 + j) * D + d;
        kval = LOAD(k[g]);
        vval = LOAD(v[g]);
      }
      Ks[j * DP + d] = kval;
      Vs[j * D + d] = vval;
    }
    barrier();
    for (uint jj = 0; jj < 2; ++jj) {
      uint j = lane + 8 * jj;
      uint key = kv0 + j;
      float sc = NEG_INF;
      if (key < p.seq_kv && (p.causal == 0 || int(key) <= int(i) + offset)) {
        float dot = 0.0;
        for (uint d = 0; d < D; ++d) dot += Qs[r * DP + d] * Ks[j * DP + d];
        sc = dot * p.scale;
      }
      Ss[r * 16 + j] = sc;
    }
    barrier();
    float mb = NEG_INF;
    for (uint j = 0; j < 16; ++j) mb = max(mb, Ss[r * 16 + j]);
    float m_new = max(m, mb);
    if (m_new != NEG_INF) {
      float corr = m != NEG_INF ? exp(m - m_new) : 0.0;
      l *= corr;
      for (uint c = 0; c < DL; ++c) acc[c] *= corr;
      for (uint j = 0; j < 16; ++j) {
        float sc = Ss[r * 16 + j];
        float pj = sc != NEG_INF ? exp(sc - m_new) : 0.0;
        l += pj;
        for (uint c = 0; c < DL; ++c) acc[c] += pj * Vs[j * D + lane + 8 * c];
      }
      m = m_new;
    }
    barrier();
  }
  if (i < p.seq_q) {
    float inv = l > 0.0 ? 1.0 / l : 0.0;
    for (uint c = 0; c < DL; ++c) o[(h * p.seq_q + i) * D + lane + 8 * c] = STORE(acc[c] * inv);
  }
}
