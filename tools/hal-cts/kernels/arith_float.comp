// Area Arithmetic: float operation |op| on element i of a, b, c (f32 bits), one thread per
// element; out[2i] = the result's bits, out[2i + 1] = 0. The op numbers are those of
// test_arithmetic.cpp (FloatOp). Each case is one instruction, so no contraction applies.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) readonly buffer C { uint c[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Params { uint n; uint op; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  float x = uintBitsToFloat(a[i]), y = uintBitsToFloat(b[i]), z = uintBitsToFloat(c[i]);
  float r = uintBitsToFloat(0x7fc0deadu);
  switch (op) {
    case 0u: r = x + y; break;
    case 1u: r = x - y; break;
    case 2u: r = x * y; break;
    case 3u: r = fma(x, y, z); break;
    case 4u: r = x / y; break;
    case 5u: r = sqrt(x); break;
    case 6u: r = 1.0 / x; break;
    case 7u: r = inversesqrt(x); break;
    case 8u: r = exp2(x); break;
    case 9u: r = log2(x); break;
    case 10u: r = sin(x); break;
    case 11u: r = cos(x); break;
    case 12u: r = exp(x); break;
    case 13u: r = log(x); break;
    case 14u: r = pow(x, y); break;
    default: break;
  }
  o[2u * i] = floatBitsToUint(r);
  o[2u * i + 1u] = 0u;
}
