// Area Subgroups: ballots and broadcasts (GL_KHR_shader_subgroup_ballot). Each invocation reads
// two words (v, w), votes p = v & 1, and writes a record of 32 words: its layout (as
// sg_layout.comp), subgroupBallot(true) and subgroupBallot(p) (4 words each), the ballot's bit
// count, inclusive and exclusive bit counts, find-LSB and find-MSB, broadcasts of w (first
// active, from invocation 0, from the last invocation of the size), inverse ballot and bit
// extract of a ballot made from the push constant, the Eq and Lt masks (4 words each), and the
// bit counts of the Ge, Gt and Le masks (8 bits each).
#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint op; uint param; };
void store4(uint at, uvec4 v) {
  data[at] = v.x;
  data[at + 1u] = v.y;
  data[at + 2u] = v.z;
  data[at + 3u] = v.w;
}
void main() {
  uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  uint i = gl_WorkGroupID.x * threads + gl_LocalInvocationIndex;
  uint base = i * 32u;
  uint v = a[2u * i];
  uint w = a[2u * i + 1u];
  bool p = (v & 1u) != 0u;
  data[base + 0u] = gl_SubgroupSize;
  data[base + 1u] = gl_SubgroupInvocationID;
  data[base + 2u] = gl_SubgroupID;
  data[base + 3u] = gl_NumSubgroups;
  uvec4 everyone = subgroupBallot(true);
  uvec4 b = subgroupBallot(p);
  store4(base + 4u, everyone);
  store4(base + 8u, b);
  data[base + 12u] = subgroupBallotBitCount(b);
  data[base + 13u] = subgroupBallotInclusiveBitCount(b);
  data[base + 14u] = subgroupBallotExclusiveBitCount(b);
  data[base + 15u] = subgroupBallotFindLSB(b);
  data[base + 16u] = subgroupBallotFindMSB(b);
  data[base + 17u] = subgroupBroadcastFirst(w);
  data[base + 18u] = subgroupBroadcast(w, 0u);
  data[base + 19u] = subgroupBroadcast(w, gl_SubgroupSize - 1u);
  uvec4 pattern = uvec4(param, param * 3u + op, ~param, param ^ 0xF0F0F0F0u);
  data[base + 20u] = subgroupInverseBallot(pattern) ? 1u : 0u;
  data[base + 21u] = subgroupBallotBitExtract(pattern, w % gl_SubgroupSize) ? 1u : 0u;
  store4(base + 22u, gl_SubgroupEqMask);
  store4(base + 26u, gl_SubgroupLtMask);
  data[base + 30u] = subgroupBallotBitCount(gl_SubgroupGeMask) |
                     (subgroupBallotBitCount(gl_SubgroupGtMask) << 8) |
                     (subgroupBallotBitCount(gl_SubgroupLeMask) << 16);
}
