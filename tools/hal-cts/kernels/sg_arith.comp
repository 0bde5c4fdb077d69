// Area Subgroups: reductions and scans (GL_KHR_shader_subgroup_arithmetic). Each invocation
// reads v and writes a record of 32 words: its layout (as sg_layout.comp), then the reduction,
// inclusive scan and exclusive scan of operation |op| over the subgroup's active invocations,
// and subgroupAdd(1u). op: 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor on uint v; 6 add, 7 min,
// 8 max on int(v); 9 add on float (int(v & 2047) - 1024) / 8, exact in any order (its bits).
#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer In { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint op; uint param; };
void main() {
  uint threads = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
  uint i = gl_WorkGroupID.x * threads + gl_LocalInvocationIndex;
  uint base = i * 32u;
  uint v = a[2u * i] ^ param;
  int s = int(v);
  float f = float(int(v & 2047u) - 1024) * 0.125;
  data[base + 0u] = gl_SubgroupSize;
  data[base + 1u] = gl_SubgroupInvocationID;
  data[base + 2u] = gl_SubgroupID;
  data[base + 3u] = gl_NumSubgroups;
  uvec3 r = uvec3(0u);
  switch (op) {
    case 0u: r = uvec3(subgroupAdd(v), subgroupInclusiveAdd(v), subgroupExclusiveAdd(v)); break;
    case 1u: r = uvec3(subgroupMin(v), subgroupInclusiveMin(v), subgroupExclusiveMin(v)); break;
    case 2u: r = uvec3(subgroupMax(v), subgroupInclusiveMax(v), subgroupExclusiveMax(v)); break;
    case 3u: r = uvec3(subgroupAnd(v), subgroupInclusiveAnd(v), subgroupExclusiveAnd(v)); break;
    case 4u: r = uvec3(subgroupOr(v), subgroupInclusiveOr(v), subgroupExclusiveOr(v)); break;
    case 5u: r = uvec3(subgroupXor(v), subgroupInclusiveXor(v), subgroupExclusiveXor(v)); break;
    case 6u: r = uvec3(ivec3(subgroupAdd(s), subgroupInclusiveAdd(s), subgroupExclusiveAdd(s))); break;
    case 7u: r = uvec3(ivec3(subgroupMin(s), subgroupInclusiveMin(s), subgroupExclusiveMin(s))); break;
    case 8u: r = uvec3(ivec3(subgroupMax(s), subgroupInclusiveMax(s), subgroupExclusiveMax(s))); break;
    default:
      r = floatBitsToUint(vec3(subgroupAdd(f), subgroupInclusiveAdd(f), subgroupExclusiveAdd(f)));
      break;
  }
  data[base + 4u] = r.x;
  data[base + 5u] = r.y;
  data[base + 6u] = r.z;
  data[base + 7u] = subgroupAdd(1u);
}
