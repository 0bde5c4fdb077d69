#version 450
// Uniform blocks whose size comes from matrix layouts: std140 gives a mat3 three 16-byte columns
// (48 bytes, not 36), and a row_major mat2x4 four 16-byte rows (64 bytes, not 32).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform Transform { vec4 offset; mat3 rotation; } t;
layout(set = 0, binding = 1) uniform Rows { layout(row_major) mat2x4 m; } r;
layout(set = 0, binding = 2) buffer Y { vec4 y[]; };
void main() {
  y[0] = t.offset + vec4(t.rotation[2], 0.0);
  y[1] = r.m[1];
}
