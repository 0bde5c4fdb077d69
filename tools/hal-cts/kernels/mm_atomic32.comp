// 32-bit atomics under contention (area MemoryModel). Each thread g = workgroup * 64 + thread
// makes |iters| atomics of operation |op| on address g % addrs: of out[] (space 0, one set of
// addresses for the whole grid) or of a shared array (space 1, one set per workgroup, which is
// set to |init| first and copied to out[workgroup * addrs + a] last). Operand of step i:
// v = (g * 0x9E3779B1) ^ (i * 0x85EBCA77). Each atomic's returned value goes to
// tickets[g * iters + i]. Operations: 0 add v, 1 add 1, 2 add -v (neither GLSL nor PTX has an
// atomic subtract), 3 min unsigned, 4 max unsigned, 5 min signed, 6 max signed, 7 and, 8 or,
// 9 xor, 10 exchange with g * iters + i + 1, 11 a compare-exchange counter (retry with the value
// seen, at most 4096 tries; 0xFFFFFFFF when it gives up). out_s is out seen as signed (the host passes the
// same buffer twice); the kernel reads and writes through both, so both stay parameters.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) coherent buffer OutU { uint out_u[]; };
layout(set = 0, binding = 1) coherent buffer OutS { int out_s[]; };
layout(set = 0, binding = 2) buffer Tickets { uint tickets[]; };
layout(push_constant) uniform Params {
  uint op;
  uint iters;
  uint addrs;
  uint space;
  uint init;
};
shared uint su[8];
shared int ss[8];

#define ATOMIC_STEP(U, S)                                        \
  switch (op) {                                                  \
    case 0u: r = atomicAdd(U, v); break;                         \
    case 1u: r = atomicAdd(U, 1u); break;                        \
    case 2u: r = atomicAdd(U, 0u - v); break;                    \
    case 3u: r = atomicMin(U, v); break;                         \
    case 4u: r = atomicMax(U, v); break;                         \
    case 5u: r = uint(atomicMin(S, int(v))); break;              \
    case 6u: r = uint(atomicMax(S, int(v))); break;              \
    case 7u: r = atomicAnd(U, v); break;                         \
    case 8u: r = atomicOr(U, v); break;                          \
    case 9u: r = atomicXor(U, v); break;                         \
    case 10u: r = atomicExchange(U, g * iters + i + 1u); break;  \
    default: {                                                   \
      uint guess = init;                                         \
      r = 0xFFFFFFFFu;                                           \
      for (uint k = 0u; k < 4096u; ++k) {                        \
        uint seen = atomicCompSwap(U, guess, guess + 1u);        \
        if (seen == guess) {                                     \
          r = guess;                                             \
          break;                                                 \
        }                                                        \
        guess = seen;                                            \
      }                                                          \
    }                                                            \
  }

void main() {
  uint t = gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.x * 64u + t;
  uint a = g % addrs;
  if (space == 1u) {
    if (t < addrs) {
      su[t] = init;
      ss[t] = int(init);
    }
    barrier();
  }
  for (uint i = 0u; i < iters; ++i) {
    uint v = (g * 0x9E3779B1u) ^ (i * 0x85EBCA77u);
    uint r;
    if (space == 1u) {
      ATOMIC_STEP(su[a], ss[a])
    } else {
      ATOMIC_STEP(out_u[a], out_s[a])
    }
    tickets[g * iters + i] = r;
  }
  if (space == 1u) {
    barrier();
    if (t < addrs) {
      if (op == 5u || op == 6u) {
        out_s[gl_WorkGroupID.x * addrs + t] = ss[t];
      } else {
        out_u[gl_WorkGroupID.x * addrs + t] = su[t];
      }
    }
  }
}
