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
