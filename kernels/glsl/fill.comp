#version 450
// fill_f32(Y, n, value): Y[i] = value for i < n. Any grid; block 256.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer Y_ { float y[]; };
layout(push_constant) uniform Params { uint n; float value; } p;
void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) y[i] = p.value;
}
