// 64-bit atomics under contention (area MemoryModel), shared memory. Each thread g = workgroup * 64
// + thread makes |iters| atomics of operation |op| on address g % addrs of a shared array, one set
// per workgroup, set to the initial value first and copied to out[workgroup * addrs + a] last.
// Operand of step i: v = u64((g * 0x9E3779B1) ^ (i * 0x85EBCA77)) * 0x9E3779B97F4A7C15, which uses
// all 64 bits. The initial value is init_hi << 32 | init_lo. Each atomic's returned value goes to
// tickets[g * iters + i]. Operations as in mm_atomic32.comp: 0 add v, 1 add 1, 2 add -v, 3 min
// unsigned, 4 max unsigned, 5 min signed, 6 max signed, 7 and, 8 or, 9 xor, 10 exchange with (g *
// iters + i + 1) * 0x100000001, 11 a compare-exchange counter from the initial value (at most 4096
// tries; all ones when it gives up). out_s is out seen as signed (the host passes the same buffer
// twice); the kernel reads and writes through both, so both stay parameters.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer OutU { uint64_t out_u[]; };
layout(set = 0, binding = 1) buffer OutS { int64_t out_s[]; };
layout(set = 0, binding = 2) buffer Tickets { uint64_t tickets[]; };
layout(push_constant) uniform Params {
  uint op;
  uint iters;
  uint addrs;
  uint init_lo;
  uint init_hi;
};
shared uint64_t su[8];
shared int64_t ss[8];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.x * 64u + t;
  uint a = g % addrs;
  uint64_t init = (uint64_t(init_hi) << 32) | uint64_t(init_lo);
  if (t < addrs) {
    su[t] = init;
    ss[t] = int64_t(init);
  }
  barrier();
  for (uint i = 0u; i < iters; ++i) {
    uint64_t v = uint64_t((g * 0x9E3779B1u) ^ (i * 0x85EBCA77u)) * 0x9E3779B97F4A7C15ul;
    uint64_t r;
    switch (op) {
      case 0u: r = atomicAdd(su[a], v); break;
      case 1u: r = atomicAdd(su[a], 1ul); break;
      case 2u: r = atomicAdd(su[a], 0ul - v); break;
      case 3u: r = atomicMin(su[a], v); break;
      case 4u: r = atomicMax(su[a], v); break;
      case 5u: r = uint64_t(atomicMin(ss[a], int64_t(v))); break;
      case 6u: r = uint64_t(atomicMax(ss[a], int64_t(v))); break;
      case 7u: r = atomicAnd(su[a], v); break;
      case 8u: r = atomicOr(su[a], v); break;
      case 9u: r = atomicXor(su[a], v); break;
      case 10u: r = atomicExchange(su[a], uint64_t(g * iters + i + 1u) * 0x100000001ul); break;
      default: {
        uint64_t guess = init;
        r = ~0ul;
        for (uint k = 0u; k < 4096u; ++k) {
          uint64_t seen = atomicCompSwap(su[a], guess, guess + 1ul);
          if (seen == guess) {
            r = guess;
            break;
          }
          guess = seen;
        }
      }
    }
    tickets[g * iters + i] = r;
  }
  barrier();
  if (t < addrs) {
    if (op == 5u || op == 6u) {
      out_s[gl_WorkGroupID.x * addrs + t] = ss[t];
    } else {
      out_u[gl_WorkGroupID.x * addrs + t] = su[t];
    }
  }
}
