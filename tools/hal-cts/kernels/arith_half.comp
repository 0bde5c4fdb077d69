// Area Arithmetic: conversions between f32 and f16 through 16-bit storage, one thread per
// element. op 0: c[i] = f16(a[i]) (a: f32 bits; OpFConvert). op 1: out[2i] = the f32 bits of
// b[i] (b: f16), out[2i + 1] = 0. The op numbers are those of test_arithmetic.cpp (HalfOp).
#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float16_t c[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Params { uint n; uint op; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  if (op == 0u) c[i] = float16_t(uintBitsToFloat(a[i]));
  if (op == 1u) {
    o[2u * i] = floatBitsToUint(float(b[i]));
    o[2u * i + 1u] = 0u;
  }
}
