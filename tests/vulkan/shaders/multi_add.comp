#version 450
// One of two entry points linked into one module: Y[i] += value.
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer Y { uint y[]; };
layout(push_constant) uniform Params { uint value; uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] += value;
}
