// C (M×N, fp32) = A (M×K, fp16) · B (K×N, fp16), all row-major, with VK_KHR_cooperative_matrix:
// one subgroup per workgroup computes one 16×16 tile of C, 16 deep in K at a time. M, N and K
// are multiples of 16. The workgroup size (constant 0) is the device's subgroup size.
//
// Debian 12's glslc predates GL_KHR_cooperative_matrix, so the binary beside this file,
// coopmat_matmul.spv, is committed. It was made with glslang 13.1:
//   glslangValidator -V --target-env vulkan1.2 coopmat_matmul.comp -o coopmat_matmul.spv
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Shape {
  uint m;
  uint n;
  uint k;
} shape;

void main() {
  const uint row = gl_WorkGroupID.y * 16;
  const uint col = gl_WorkGroupID.x * 16;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> sum =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  for (uint k = 0; k < shape.k; k += 16) {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> tile_a;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tile_b;
    coopMatLoad(tile_a, a, row * shape.k + k, shape.k, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(tile_b, b, k * shape.n + col, shape.n, gl_CooperativeMatrixLayoutRowMajor);
    sum = coopMatMulAdd(tile_a, tile_b, sum);
  }
  coopMatStore(sum, c, row * shape.n + col, shape.n, gl_CooperativeMatrixLayoutRowMajor);
}
