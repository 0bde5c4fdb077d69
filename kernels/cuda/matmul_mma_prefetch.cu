// The tensor-core matmul kernels with the prefetching mainloop (matmul_mma.cuh). A file of their
// own, so that loading one family's PTX compiles only its kernels: a driver compiles every
// kernel of a PTX module when it loads it.
#include "matmul_mma.cuh"

HAL_MATMUL_MMA(matmul_mma_f16_256x128_k64_prefetch, 256, 128, 64, 64, 64, 3, kPrefetch)
HAL_MATMUL_MMA(matmul_mma_f16_128x256_k64_prefetch, 128, 256, 64, 64, 64, 3, kPrefetch)
HAL_MATMUL_MMA(matmul_mma_f16_128x128_prefetch, 128, 128, 32, 64, 64, 3, kPrefetch)
