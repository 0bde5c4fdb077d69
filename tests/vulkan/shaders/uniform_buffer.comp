#version 450
// Settings in a uniform block, as hand-written compute shaders pass them. std140 gives each float
// of |weights| 16 bytes, so the block is 80 bytes, not 20: hal must size it by its layout.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform Settings {
  uint scale;
  float weights[4];
} settings;
layout(set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n; } push;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < push.n) y[i] = float(settings.scale) * settings.weights[i % 4];
}
