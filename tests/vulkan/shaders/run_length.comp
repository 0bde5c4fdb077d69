#version 450
// r[i] = how many values from a[i] on are positive: the loop's condition loads from the buffer in
// the loop header, and without a non-positive value at the end it reads past the buffer.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer R { uint r[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  uint j = i;
  while (a[j] > 0.0) j++;
  r[i] = j - i;
}
