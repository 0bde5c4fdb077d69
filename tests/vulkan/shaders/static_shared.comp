#version 450
// Declares 128 floats and 4 uvec4 of shared memory (576 bytes), for reflection tests.
layout(local_size_x = 4, local_size_y = 2, local_size_z = 1) in;
shared float a[128];
shared uvec4 b[4];
layout(set = 1, binding = 3) buffer Y { float y[]; };
layout(set = 0, binding = 5) buffer Z { uint z[]; };
layout(push_constant) uniform Params { float scale; uint n; vec2 pair; };
void main() {
  uint l = gl_LocalInvocationIndex;
  a[l] = float(l) * scale + pair.x;
  if (l < 4u) b[l] = uvec4(l);
  barrier();
  if (l < n) { y[l] = a[l]; z[l] = b[l % 4u].x; }
}
