// Area Arithmetic: conversion |op| between f32 and 32-bit integers on element i of a (bits),
// one thread per element; out[2i] = the result's bits, out[2i + 1] = 0. b and c are unused
// (named once, so that the compiler keeps them in the parameter list).
// The op numbers are those of test_arithmetic.cpp (CvtOp).
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
  uint r = 0xdeadbeefu;
  switch (op) {
    case 0u: r = uint(int(uintBitsToFloat(a[i]))); break;           // OpConvertFToS
    case 1u: r = uint(uintBitsToFloat(a[i])); break;                // OpConvertFToU
    case 6u: r = floatBitsToUint(float(int(a[i]))); break;          // OpConvertSToF
    case 7u: r = floatBitsToUint(float(a[i])); break;               // OpConvertUToF
    case 0xffffffffu: r = b[i] + c[i]; break;  // keeps b and c in the parameter list
    default: break;
  }
  o[2u * i] = r;
  o[2u * i + 1u] = 0u;
}
