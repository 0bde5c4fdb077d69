#version 450
// One of two entry points linked into one module: Y[i] *= value.
layout(local_size_x = 8, local_size_y = 2) in;
layout(set = 0, binding = 0) buffer Y { uint y[]; };
layout(push_constant) uniform Params { uint value; uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x * 2u + gl_LocalInvocationID.y;
  if (i < n) y[i] *= value;
}
