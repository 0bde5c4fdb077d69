#version 450
// Shared memory sized by the workgroup size, which the launch chooses: buf holds 16 floats per
// invocation. Y[i] = X[i] + 1 through shared memory.
layout(local_size_x_id = 0) in;
shared float buf[gl_WorkGroupSize.x * 16u];
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params { uint n; };
void main() {
  uint l = gl_LocalInvocationID.x;
  uint i = gl_GlobalInvocationID.x;
  buf[l * 16u] = i < n ? x[i] : 0.0;
  barrier();
  if (i < n) y[i] = buf[l * 16u] + 1.0;
}
