#version 450
// Buffer-device-address kernel: C[i] = A[i] * 2 + B[i]; A, B and C are addresses passed in push
// constants, so the parameters are A, B, C (pointers) and n (value), as for a CUDA kernel.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer In { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Out { int v[]; };
layout(push_constant) uniform Params {
  In a;
  uint64_t b; // a raw 64-bit address is a pointer parameter too
  Out c;
  uint n;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) c.v[i] = a.v[i] * 2 + In(b).v[i];
}
