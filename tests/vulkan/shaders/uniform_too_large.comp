#version 450
// A uniform block of 80000 bytes: more than many devices bind in one uniform descriptor
// (maxUniformBufferRange is 65536 on most).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform Table { vec4 rows[5000]; } table;
layout(set = 0, binding = 1) buffer Y { vec4 y[]; };
void main() { y[0] = table.rows[4999]; }
