#version 450
// Y[i] = i * 3 + gl_WorkGroupSize.x for i < n; the workgroup size comes from the launch.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Params { uint n; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < n) y[i] = i * 3u + gl_WorkGroupSize.x;
}
