#version 450
// C[i] = A[i] + B[i] for i < n. Parameters: A, B, C (pointers), n (value).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) c[i] = a[i] + b[i];
}
