#version 450
// y[i + write_shift] = x[i + read_shift] for i < n: a shift makes one side run past its buffer
// (the bounds-check tests; the entry point is renamed shift_copy).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Y { float y[]; };
layout(set = 0, binding = 1) readonly buffer X { float x[]; };
layout(push_constant) uniform P {
  uint write_shift;
  uint read_shift;
  uint n;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i + write_shift] = x[i + read_shift];
}
