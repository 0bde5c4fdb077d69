// Area Arithmetic: integer operation |op| on element i of a, b, c, one thread per element;
// out[2i], out[2i + 1] = the result's low and high words (high 0 for 32-bit results). The op
// numbers are those of test_arithmetic.cpp (IntOp); the host gives shifts below 32 only, and
// division and remainder non-negative operands and non-zero divisors only (what SPIR-V and
// Vulkan define).
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
  uint x = a[i], y = b[i], z = c[i];
  uint lo = 0xdeadbeefu, hi = 0u;
  int slo, shi;
  switch (op) {
    case 0u: lo = x + y; break;
    case 1u: lo = x - y; break;
    case 2u: lo = x * y; break;
    case 3u: umulExtended(x, y, hi, lo); lo = hi; hi = 0u; break;
    case 4u: imulExtended(int(x), int(y), shi, slo); lo = uint(shi); break;
    case 5u: umulExtended(x, y, hi, lo); break;
    case 6u: imulExtended(int(x), int(y), shi, slo); lo = uint(slo); hi = uint(shi); break;
    case 7u: lo = x * y + z; break;
    case 10u: lo = x / y; break;
    case 11u: lo = x % y; break;
    case 12u: lo = uint(int(x) / int(y)); break;
    case 14u: lo = x << y; break;
    case 15u: lo = x >> y; break;
    case 16u: lo = uint(int(x) >> int(y)); break;
    case 17u: lo = uint(int(x) + int(y)); break;
    case 20u: lo = uint(int(x) * int(y)); break;
    default: break;
  }
  o[2u * i] = lo;
  o[2u * i + 1u] = hi;
}
