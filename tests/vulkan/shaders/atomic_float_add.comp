// Every invocation adds its element of X to one float: a float atomic add
// (GL_EXT_shader_atomic_float, the AtomicFloat32AddEXT capability).
#version 450
#extension GL_EXT_shader_atomic_float : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Sum { float sum; };
layout(push_constant) uniform Count { uint n; } count;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < count.n) atomicAdd(sum, x[i]);
}
