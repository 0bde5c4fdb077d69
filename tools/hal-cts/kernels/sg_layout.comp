// Area Subgroups: the layout of a workgroup's subgroups as the device runs them. Each invocation
// writes a record of 32 words: SubgroupSize, SubgroupInvocationId, SubgroupId, NumSubgroups,
// then whether subgroupElect() chose it, and its input word xor the push constant (a data-path
// check). Basic subgroup operations only. The workgroup size is chosen at launch.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint op; uint param; };
void main() {
  uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  uint i = gl_WorkGroupID.x * threads + gl_LocalInvocationIndex;
  uint base = i * 32u;
  data[base + 0u] = gl_SubgroupSize;
  data[base + 1u] = gl_SubgroupInvocationID;
  data[base + 2u] = gl_SubgroupID;
  data[base + 3u] = gl_NumSubgroups;
  data[base + 4u] = subgroupElect() ? 1u : 0u;
  data[base + 5u] = a[2u * i] ^ param ^ op;
}
