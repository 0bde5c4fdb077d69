// dst[i] = ((src[i] ^ salt) * 0x9E3779B1) + i for i < n, a grid-stride loop (area MemoryModel):
// every word the kernel writes depends on the word it read at the same index.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
  uint n;
  uint salt;
};
void main() {
  uint stride = gl_NumWorkGroups.x * 64u;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) dst[i] = ((src[i] ^ salt) * 0x9E3779B1u) + i;
}
