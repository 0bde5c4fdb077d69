// Two nested loops of a dependent integer mix, |outer| times |inner| steps, from x = the
// workgroup's index; one thread per workgroup writes out[workgroup] = x (area Execution).
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint outer; uint inner; };
void main() {
  uint x = gl_WorkGroupID.x;
  for (uint o = 0u; o < outer; ++o) {
    for (uint i = 0u; i < inner; ++i) {
      x = x * 1664525u + 1013904223u;
      x ^= x >> 13;
    }
  }
  data[gl_WorkGroupID.x] = x;
}
