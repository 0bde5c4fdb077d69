#version 450
// Y[i] = X[i] * SCALE + OFFSET, both specialization constants.
layout(local_size_x = 32) in;
layout(constant_id = 3) const uint SCALE = 1u;
layout(constant_id = 4) const int OFFSET = 0;
layout(set = 0, binding = 0) readonly buffer X { int x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Params { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] = x[i] * int(SCALE) + OFFSET;
}
