#version 450
// What alignment each buffer-device-address parameter needs: the widest access made through it.
//   f: float loads and stores (Aligned 4); v: vec4 stores (Aligned 16); counter: an atomic on a
//   uint (natural alignment 4), reached from a raw 64-bit address plus an offset; unused: an
//   address the kernel never dereferences (any value passes).
// v[i] = vec4(f[i]); f[i] = f[i] * 2; counter[1] += 1 once per invocation.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430) buffer Floats { float f[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4s { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint u[]; };
layout(push_constant) uniform Params {
  Floats f;
  Vec4s v;
  uint64_t counter;
  uint64_t unused;
  uint n;
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= n) return;
  float x = f.f[i];
  v.v[i] = vec4(x);
  f.f[i] = x * 2.0;
  atomicAdd(Uints(counter + 4ul).u[0], 1u);
}
