// Area Subgroups: shuffles (GL_KHR_shader_subgroup_shuffle). Each invocation reads two words
// (v, w) and writes a record of 32 words: its layout (as sg_layout.comp), then
// subgroupShuffle(v, w % SubgroupSize) (a source per invocation), subgroupShuffle(v, param) (one
// source for all) and subgroupShuffleXor(v, param). The push constant is below SubgroupSize.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint op; uint param; };
void main() {
  uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  uint i = gl_WorkGroupID.x * threads + gl_LocalInvocationIndex;
  uint base = i * 32u;
  uint v = a[2u * i] ^ op;
  uint w = a[2u * i + 1u];
  data[base + 0u] = gl_SubgroupSize;
  data[base + 1u] = gl_SubgroupInvocationID;
  data[base + 2u] = gl_SubgroupID;
  data[base + 3u] = gl_NumSubgroups;
  data[base + 4u] = subgroupShuffle(v, w % gl_SubgroupSize);
  data[base + 5u] = subgroupShuffle(v, param);
  data[base + 6u] = subgroupShuffleXor(v, param);
}
