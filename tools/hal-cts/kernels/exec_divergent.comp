// Loops whose trip counts differ from lane to lane (0 to spread - 1), with a continue, a
// data-dependent break and a divergent inner loop, then a barrier and a read of the next
// thread's result: the lanes of each subgroup leave the loops at different times and must all
// meet again at the barrier (area Execution).
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint spread; };
shared uint ends[64];
void main() {
  uint l = gl_LocalInvocationID.x;
  uint t = gl_GlobalInvocationID.x;
  uint x = t;
  uint n = (t * 7u) % spread;
  for (uint i = 0u; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    x ^= x >> 13;
    if ((x & 7u) == 0u) continue;
    if ((x % 97u) == 3u) break;
    uint m = (x >> 5) & 7u;
    for (uint j = 0u; j < m; ++j) x += j ^ t;
  }
  ends[l] = x;
  barrier();
  data[t] = x ^ (ends[(l + 1u) % 64u] * 2654435761u) ^ n;
}
