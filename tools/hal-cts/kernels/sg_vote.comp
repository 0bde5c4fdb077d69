// Area Subgroups: votes (GL_KHR_shader_subgroup_vote). Each invocation reads v, votes p = v & 1,
// and writes a record of 32 words: its layout (as sg_layout.comp), then subgroupAll(p),
// subgroupAny(p), subgroupAllEqual(v) and subgroupAllEqual(p), each 1 or 0.
#version 450
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint op; uint param; };
void main() {
  uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  uint i = gl_WorkGroupID.x * threads + gl_LocalInvocationIndex;
  uint base = i * 32u;
  uint v = a[2u * i] ^ param ^ op;
  bool p = (v & 1u) != 0u;
  data[base + 0u] = gl_SubgroupSize;
  data[base + 1u] = gl_SubgroupInvocationID;
  data[base + 2u] = gl_SubgroupID;
  data[base + 3u] = gl_NumSubgroups;
  data[base + 4u] = subgroupAll(p) ? 1u : 0u;
  data[base + 5u] = subgroupAny(p) ? 1u : 0u;
  data[base + 6u] = subgroupAllEqual(v) ? 1u : 0u;
  data[base + 7u] = subgroupAllEqual(p) ? 1u : 0u;
}
