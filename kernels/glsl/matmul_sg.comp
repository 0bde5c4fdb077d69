#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"
// matmul_sg_{f32,f16}_<BM>x<BN>(A, B, C, M, N, K, lda, ldb, ldc, alpha, beta):
// C = alpha * A * B + beta * C, row-major, as matmul_naive. Register-tiled like matmul_reg (no
// shared memory, no barriers), with the loads of A shared across a subgroup: a workgroup of 64
// invocations, arranged SG x (64 / SG), computes a BM x BN tile of C (BM = 64 / SG * TM,
// BN = SG * TN); invocation (tx, ty) accumulates TM x TN outputs at rows m0 + ty * TM + i and
// columns n0 + tx + j * SG. The SG invocations of one ty need the same TM rows of A, so when they
// form one subgroup, in lane order, lane l loads rows l, l + SG, ... and every lane takes the
// values it needs by subgroupBroadcast: TM / SG loads of A per k instead of TM. Where loads are
// the cost (CPU Vulkan implementations, which load lane by lane), that is the difference. When the
// subgroup is anything else (another size, a partial or reordered subgroup), each invocation
// loads its rows itself: slower, the same result. Row and column indices of every load are
// clamped into the matrices and every store is guarded, so any M, N, K >= 1 and any leading
// dimensions work. Block 64 (1-D); grid (ceil(N/BN), ceil(M/BM), 1).
// Specialization constants (0: TM, 1: TN, 2: SG, the subgroup size it is laid out for; a tuner
// sets the device's); the defaults come from the build (-DSG_TM=...). Needs subgroup ballot
// operations (HAL_FEATURE_SUBGROUP_BALLOT) in the compute stage.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint TM = SG_TM;
layout(constant_id = 1) const uint TN = SG_TN;
layout(constant_id = 2) const uint SG = SG_SG;
const uint TY = 64 / SG;
const uint RA = (TM + SG - 1) / SG;  // rows of A each lane loads for its subgroup
layout(set = 0, binding = 0) readonly buffer A_ {
  ELEM a[];
};
layout(set = 0, binding = 1) readonly buffer B_ {
  ELEM b[];
};
layout(set = 0, binding = 2) buffer C_ {
  ELEM c[];
};
layout(push_constant) uniform Params {
  uint M, N, K, lda, ldb, ldc;
  float alpha, beta;
}
p;

// acc += (row i of the A tile at k .. k + KS - 1) x (B rows k .. k + KS - 1), for KS = 4 or 1;
// A_AT(i, kk) is A[m0 + i][k + kk] however it was obtained.
#define STEP(KS, A_AT)                                                              \
  [[unroll]] for (uint kk = 0; kk < KS; ++kk) {                                     \
    float bv[TN];                                                                   \
    uint o = (k + kk) * p.ldb;                                                      \
    [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = LOAD(b[o + bcol[j]]);          \
    [[unroll]] for (uint i = 0; i < TM; ++i) {                                      \
      float av = A_AT(i, kk);                                                       \
      [[unroll]] for (uint j = 0; j < TN; ++j) acc[i * TN + j] += av * bv[j];       \
    }                                                                               \
  }

void main() {
  uint t = gl_LocalInvocationIndex;
  uint tx = t % SG;
  uint ty = t / SG;
  uint m0 = gl_WorkGroupID.y * (TY * TM) + ty * TM;
  uint n0 = gl_WorkGroupID.x * (SG * TN) + tx;
  // Share only when this subgroup is exactly the SG invocations of this ty, lane l being tx = l:
  // then a broadcast from lane l reads what invocation (l, ty) loaded. The test is uniform in the
  // subgroup, so every lane takes the same branch.
  uvec4 lanes = subgroupBallot(true);
  bool in_place = gl_SubgroupSize == SG && gl_SubgroupInvocationID == tx &&
                  subgroupBroadcastFirst(ty) == ty;
  bool share = subgroupBallotBitCount(lanes) == SG && subgroupBallot(in_place) == lanes;
  // Clamped load offsets: rows past M repeat row M-1 and columns past N repeat column N-1; their
  // results are never stored.
  uint bcol[TN];
  [[unroll]] for (uint j = 0; j < TN; ++j) bcol[j] = min(n0 + j * SG, p.N - 1);
  float acc[TM * TN];
  [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
  uint k = 0;
  if (share) {
    uint lrow[RA];  // lane tx loads rows tx, tx + SG, ... of the tile
    [[unroll]] for (uint r = 0; r < RA; ++r) lrow[r] = min(m0 + r * SG + tx, p.M - 1) * p.lda;
    for (; k + 4 <= p.K; k += 4) {
      vec4 lv[RA];
      [[unroll]] for (uint r = 0; r < RA; ++r) {
        uint o = lrow[r] + k;
        lv[r] = vec4(LOAD(a[o]), LOAD(a[o + 1]), LOAD(a[o + 2]), LOAD(a[o + 3]));
      }
#define A_SHARED4(i, kk) subgroupBroadcast(lv[(i) / SG][kk], (i) % SG)
      STEP(4, A_SHARED4)
    }
    for (; k < p.K; ++k) {
      float lv[RA];
      [[unroll]] for (uint r = 0; r < RA; ++r) lv[r] = LOAD(a[lrow[r] + k]);
#define A_SHARED1(i, kk) subgroupBroadcast(lv[(i) / SG], (i) % SG)
      STEP(1, A_SHARED1)
    }
  } else {
#define A_OWN(i, kk) LOAD(a[min(m0 + (i), p.M - 1) * p.lda + k + (kk)])
    for (; k + 4 <= p.K; k += 4) {
      STEP(4, A_OWN)
    }
    for (; k < p.K; ++k) {
      STEP(1, A_OWN)
    }
  }
  HAL_STORE_REGISTER_TILE(m0, n0, SG)
}
