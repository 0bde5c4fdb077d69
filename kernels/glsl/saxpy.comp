#version 450
// saxpy(X, Y, n, alpha): Y[i] = alpha * X[i] + Y[i] for i < n. Any grid; block 256.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) buffer Y_ { float y[]; };
layout(push_constant) uniform Params { uint n; float alpha; } p;
void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) y[i] = p.alpha * x[i] + y[i];
}
