// Each thread runs |steps| steps of a linear congruential generator from its global index, and
// each workgroup adds its threads' results to sum and 1 to count: the host checks both in
// closed form, however many workgroups ran, so the grid can be sized to keep a device busy for
// seconds (area Execution). The grid may be two-dimensional.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint sum; uint count; };
layout(push_constant) uniform Params { uint steps; };
shared uint group_sum;
void main() {
  if (gl_LocalInvocationID.x == 0u) group_sum = 0u;
  barrier();
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint x = group * 64u + gl_LocalInvocationID.x;
  for (uint i = 0u; i < steps; ++i) x = x * 1664525u + 1013904223u;
  atomicAdd(group_sum, x);
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    atomicAdd(sum, group_sum);
    atomicAdd(count, 1u);
  }
}
