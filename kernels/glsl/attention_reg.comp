#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// attention_reg_{f32,f16}_d<D>(Q, K, V, O, batch_heads, seq_q, seq_kv, scale, causal):
// O = softmax(Q * K^T * scale, causal mask) * V in one pass, as attention_fused, with the
// online softmax and the output kept in registers: no shared memory, no barrier. Each of the WG
// invocations of a workgroup owns RQ query rows (rows i0 + WG * r, so neighbouring invocations
// hold neighbouring rows) and all D output columns of them, and walks the keys BKV at a time:
// an RQ x BKV tile of scores (every loaded element of Q used BKV times, of K RQ times), then
// one rescale of the running sums per row, then the tile times BKV rows of V (every element of
// V used RQ times): that reuse is what pays where every load is expensive (CPU Vulkan
// implementations). Loads are clamped into the tensors and every store is guarded, so any
// seq_q, seq_kv >= 1 work; rows with no visible key give 0.
// Specialization constants (0: D, 64 or 128; 1: RQ; 2: BKV; 3: WG, the workgroup size); the
// defaults come from the build (-DHEAD_DIM=..., -DATT_RQ=..., -DATT_BKV=..., -DATT_WG=...).
// Block WG (1-D); grid (ceil(seq_q / (WG * RQ)), batch_heads, 1).
layout(local_size_x = ATT_WG, local_size_x_id = 3) in;
layout(constant_id = 0) const uint D = HEAD_DIM;
layout(constant_id = 1) const uint RQ = ATT_RQ;
layout(constant_id = 2) const uint BKV = ATT_BKV;
const uint WG = gl_WorkGroupSize.x;
layout(set = 0, binding = 0) readonly buffer Q_ {
  ELEM q[];
};
layout(set = 0, binding = 1) readonly buffer K_ {
  ELEM k[];
};
layout(set = 0, binding = 2) readonly buffer V_ {
  ELEM v[];
};
layout(set = 0, binding = 3) writeonly buffer O_ {
  ELEM o[];
};
layout(push_constant) uniform Params {
  uint batch_heads, seq_q, seq_kv;
  float scale;
  uint causal;
}
p;
void main() {
  uint h = gl_WorkGroupID.y;
  if (h >= p.batch_heads) return;
  uint i0 = gl_WorkGroupID.x * (WG * RQ) + gl_LocalInvocationID.x;
  int offset = int(p.seq_kv) - int(p.seq_q);
  uint qrow[RQ];
  [[unroll]] for (uint r = 0; r < RQ; ++r) {
    qrow[r] = (h * p.seq_q + min(i0 + WG * r, p.seq_q - 1)) * D;
  }
  // Keys past kv_end are hidden from every row of this workgroup.
  uint kv_end = p.seq_kv;
  if (p.causal != 0) {
    int last = int(min(gl_WorkGroupID.x * (WG * RQ) + WG * RQ - 1, p.seq_q - 1)) + offset + 1;
    kv_end = uint(clamp(last, 0, int(p.seq_kv)));
  }
  uint kbase = h * p.seq_kv * D;
  float m[RQ];
  float l[RQ];
  float acc[RQ * D];
  [[unroll]] for (uint r = 0; r < RQ; ++r) {
    m[r] = NEG_INF;
    l[r] = 0.0;
  }
  [[unroll]] for (uint c = 0; c < RQ * D; ++c) acc[c] = 0.0;
  for (uint kv0 = 0; kv0 < kv_end; kv0 += BKV) {
    uint krow[BKV];
    [[unroll]] for (uint j = 0; j < BKV; ++j) krow[j] = kbase + min(kv0 + j, p.seq_kv - 1) * D;
    // The RQ x BKV tile of scores.
    float s[RQ * BKV];
    [[unroll]] for (uint c = 0; c < RQ * BKV; ++c) s[c] = 0.0;
    for (uint d = 0; d < D; ++d) {
      float qv[RQ];
      [[unroll]] for (uint r = 0; r < RQ; ++r) qv[r] = LOAD(q[qrow[r] + d]);
      [[unroll]] for (uint j = 0; j < BKV; ++j) {
        float kv = LOAD(k[krow[j] + d]);
        [[unroll]] for (uint r = 0; r < RQ; ++r) s[r * BKV + j] += qv[r] * kv;
      }
    }
    // Mask, then one online-softmax step per row: s becomes the tile's probabilities.
    [[unroll]] for (uint r = 0; r < RQ; ++r) {
      int row = int(i0 + WG * r);
      float mb = NEG_INF;
      [[unroll]] for (uint j = 0; j < BKV; ++j) {
        uint key = kv0 + j;
        bool visible = key < p.seq_kv && (p.causal == 0 || int(key) <= row + offset);
        s[r * BKV + j] = visible ? s[r * BKV + j] * p.scale : NEG_INF;
        mb = max(mb, s[r * BKV + j]);
      }
      float m_new = max(m[r], mb);
      // Nothing visible yet: the row's sums stay 0 and this tile adds nothing.
      float corr = m_new == NEG_INF ? 1.0 : exp(m[r] - m_new);
      float sum = 0.0;
      [[unroll]] for (uint j = 0; j < BKV; ++j) {
        float pj = s[r * BKV + j] == NEG_INF ? 0.0 : exp(s[r * BKV + j] - m_new);
        s[r * BKV + j] = pj;
        sum += pj;
      }
      l[r] = l[r] * corr + sum;
      m[r] = m_new;
      if (corr != 1.0) {
        [[unroll]] for (uint c = 0; c < D; ++c) acc[r * D + c] *= corr;
      }
    }
    // The tile of probabilities times BKV rows of V. The loop over the keys stays a loop so that
    // the unrolled body (RQ x D multiply-adds) does not grow with BKV.
    for (uint j = 0; j < BKV; ++j) {
      float pr[RQ];
      [[unroll]] for (uint r = 0; r < RQ; ++r) pr[r] = s[r * BKV + j];
      uint vrow = kbase + min(kv0 + j, p.seq_kv - 1) * D;
      [[unroll]] for (uint c = 0; c < D; ++c) {
        float vv = LOAD(v[vrow + c]);
        [[unroll]] for (uint r = 0; r < RQ; ++r) acc[r * D + c] += pr[r] * vv;
      }
    }
  }
  [[unroll]] for (uint r = 0; r < RQ; ++r) {
    uint row = i0 + WG * r;
    if (row < p.seq_q) {
      float inv = l[r] > 0.0 ? 1.0 / l[r] : 0.0;
      uint base = (h * p.seq_q + row) * D;
      [[unroll]] for (uint c = 0; c < D; ++c) o[base + c] = STORE(acc[r * D + c] * inv);
    }
  }
}
