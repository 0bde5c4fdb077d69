// The first and last bytes of the largest allocation (area Limits): head and tail point at the
// allocation's start and near its end; each thread reads and rewrites one word of each.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Head { uint head[]; };
layout(set = 0, binding = 1) buffer Tail { uint tail[]; };
layout(push_constant) uniform Params { uint words; uint seed; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= words) return;
  head[i] = head[i] * 3u + (i ^ seed);
  tail[i] = (tail[i] ^ seed) + i * 5u;
}
