#version 450
// Accesses of every kind the bounds checks rewrite (read by the rewrite's unit tests only): a
// member before the runtime array, elements of structs, atomics, a signed index, loads in loop
// headers and continue blocks, and 16-bit values that are only loaded and stored.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
layout(local_size_x = 64) in;
struct Particle {
  vec3 position;
  float weight;
};
layout(set = 0, binding = 0) buffer Counted { uint count; float values[]; };
layout(set = 0, binding = 1) buffer Particles { Particle particles[]; };
layout(set = 1, binding = 0) buffer Histogram { uint bins[]; };
layout(set = 1, binding = 1) buffer Halves { float16_t halves[]; };
layout(push_constant) uniform P { int shift; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint j = i;
  while (values[j] > 0.0) j++;
  for (int k = 0; k < 4; values[k + shift] += 1.0) k++;
  particles[i].position.y = particles[j].weight;
  atomicAdd(bins[i % 7u], 1u);
  values[count] = float(atomicExchange(bins[shift], 3u));
  halves[i] = halves[int(i) - shift];
}
