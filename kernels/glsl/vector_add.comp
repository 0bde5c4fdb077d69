#version 450
// vector_add_f32(A, B, C, n): C[i] = A[i] + B[i] for i < n. Any grid; block 256.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A_ { float a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C_ { float c[]; };
layout(push_constant) uniform Params { uint n; } p;
void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) c[i] = a[i] + b[i];
}
