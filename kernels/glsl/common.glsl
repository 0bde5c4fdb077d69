// Shared by every kernel of the pack. Storage element type: fp32, or (with -DHAL_F16) fp16
// storage with fp32 arithmetic: values are widened on load and rounded to nearest on store.
#ifdef HAL_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#define ELEM float16_t
#define LOAD(x) float(x)
#define STORE(x) float16_t(x)
#else
#define ELEM float
#define LOAD(x) (x)
#define STORE(x) (x)
#endif

// -infinity marks masked attention scores.
#define NEG_INF uintBitsToFloat(0xff800000u)

// The epilogue of the register-tiled matmuls: C = alpha * acc + beta * C for this invocation's
// TM x TN results, row m0 + i and column n0 + j * STRIDE (STRIDE: the invocations across), each
// store guarded. Expects the push-constant block |p| (M, N, ldc, alpha, beta), buffer |c|, and
// the float array |acc| of TM * TN.
#define HAL_STORE_REGISTER_TILE(m0, n0, STRIDE)                       \
  [[unroll]] for (uint i = 0; i < TM; ++i) {                          \
    uint row = (m0) + i;                                              \
    [[unroll]] for (uint j = 0; j < TN; ++j) {                        \
      uint col = (n0) + j * (STRIDE);                                 \
      if (row < p.M && col < p.N) {                                   \
        float r = p.alpha * acc[i * TN + j];                          \
        if (p.beta != 0.0) r += p.beta * LOAD(c[row * p.ldc + col]); \
        c[row * p.ldc + col] = STORE(r);                              \
      }                                                               \
    }                                                                 \
  }
