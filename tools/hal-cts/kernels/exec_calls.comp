// A chain of twelve calls: level k returns at once for one argument in eight, so the lanes of a
// subgroup go to different depths, and otherwise calls level k - 1 with an argument and a result
// chosen by bit k; main calls the top level from either side of a branch, in a loop (area
// Execution). Compiled without optimization (tools/hal-cts/CMakeLists.txt), so the calls reach
// the driver as OpFunctionCall.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint rounds; };

uint level0(uint x) {
  x = x * 1664525u + 1013904223u;
  return x ^ (x >> 13);
}

uint level1(uint x) {
  uint b = (x >> 1u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level0((b & 1u) != 0u ? x ^ 1u : x + 1u);
  return (b & 1u) != 0u ? r + 1u : r * 3u;
}

uint level2(uint x) {
  uint b = (x >> 2u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level1((b & 1u) != 0u ? x ^ 2u : x + 2u);
  return (b & 1u) != 0u ? r + 2u : r * 3u;
}

uint level3(uint x) {
  uint b = (x >> 3u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level2((b & 1u) != 0u ? x ^ 3u : x + 3u);
  return (b & 1u) != 0u ? r + 3u : r * 3u;
}

uint level4(uint x) {
  uint b = (x >> 4u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level3((b & 1u) != 0u ? x ^ 4u : x + 4u);
  return (b & 1u) != 0u ? r + 4u : r * 3u;
}

uint level5(uint x) {
  uint b = (x >> 5u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level4((b & 1u) != 0u ? x ^ 5u : x + 5u);
  return (b & 1u) != 0u ? r + 5u : r * 3u;
}

uint level6(uint x) {
  uint b = (x >> 6u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level5((b & 1u) != 0u ? x ^ 6u : x + 6u);
  return (b & 1u) != 0u ? r + 6u : r * 3u;
}

uint level7(uint x) {
  uint b = (x >> 7u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level6((b & 1u) != 0u ? x ^ 7u : x + 7u);
  return (b & 1u) != 0u ? r + 7u : r * 3u;
}

uint level8(uint x) {
  uint b = (x >> 8u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level7((b & 1u) != 0u ? x ^ 8u : x + 8u);
  return (b & 1u) != 0u ? r + 8u : r * 3u;
}

uint level9(uint x) {
  uint b = (x >> 9u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level8((b & 1u) != 0u ? x ^ 9u : x + 9u);
  return (b & 1u) != 0u ? r + 9u : r * 3u;
}

uint level10(uint x) {
  uint b = (x >> 10u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level9((b & 1u) != 0u ? x ^ 10u : x + 10u);
  return (b & 1u) != 0u ? r + 10u : r * 3u;
}

uint level11(uint x) {
  uint b = (x >> 11u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level10((b & 1u) != 0u ? x ^ 11u : x + 11u);
  return (b & 1u) != 0u ? r + 11u : r * 3u;
}

uint level12(uint x) {
  uint b = (x >> 12u) & 7u;
  if (b == 5u) return x * 3u;
  uint r = level11((b & 1u) != 0u ? x ^ 12u : x + 12u);
  return (b & 1u) != 0u ? r + 12u : r * 3u;
}

void main() {
  uint t = gl_GlobalInvocationID.x;
  uint x = t;
  for (uint r = 0u; r < rounds; ++r) {
    if ((x & 1u) != 0u) {
      x = level12(x + r);
    } else {
      x = level12(x ^ r) + 1u;
    }
  }
  data[t] = x;
}
