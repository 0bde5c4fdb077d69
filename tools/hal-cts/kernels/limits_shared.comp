// Shared memory at the device's limit (area Limits): the block's 64 threads write every word of
// a shared array of hal_launch_config.shared_bytes bytes (the specialization constant the
// module names as its shared-bytes constant), wait at a barrier, and copy the array out, each
// thread reading the words another thread wrote: out[workgroup * words + i] = word i.
#version 450
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kSharedBytes = 4u;
shared uint tile[kSharedBytes / 4u];
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint words; uint seed; };

// The word every byte of shared word i holds: a hash of i and the workgroup's seed.
uint pattern(uint i, uint s) {
  uint x = i * 2654435761u ^ s;
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  return x;
}

void main() {
  uint t = gl_LocalInvocationID.x;
  uint s = seed ^ (gl_WorkGroupID.x * 0x9E3779B9u);
  for (uint i = t; i < words; i += 64u) tile[i] = pattern(i, s);
  barrier();
  // Thread t reads the words thread (t + 32) % 64 wrote.
  uint base = gl_WorkGroupID.x * words;
  for (uint i = (t + 32u) % 64u; i < words; i += 64u) data[base + i] = tile[i];
}
