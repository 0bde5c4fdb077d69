// The tensor-core matmul kernels with the tile-barrier mainloop (matmul_mma.cuh has the kernel
// and the rules of every instance).
#include "matmul_mma.cuh"

// matmul_mma_f16_<BM>x<BN>[_w8][_k64][_prefetch]: the block tile, and where they differ from the
// family's usual 64x64 warp tile, BK of 32 and tile-barrier mainloop: 8 warps of 64x32, BK 64,
// the prefetching mainloop (matmul_mma_prefetch.cu). All have three stages. Registers (ptxas
// 13.0, sm_90): 222 to 230 for the 64x64 warp tiles (233 to 254 prefetching), so one block of 8
// warps runs per multiprocessor; 128 for the 64x32 ones, so two. Shared memory: 24 KiB (64x64),
// 48 KiB (128x128), 144 KiB (k64: within the 163 KiB of an A100 and the 227 KiB of an H100).
HAL_MATMUL_MMA(matmul_mma_f16_256x128_k64, 256, 128, 64, 64, 64, 3, kTileBarrier)
HAL_MATMUL_MMA(matmul_mma_f16_128x256_k64, 128, 256, 64, 64, 64, 3, kTileBarrier)
HAL_MATMUL_MMA(matmul_mma_f16_128x128, 128, 128, 32, 64, 64, 3, kTileBarrier)
HAL_MATMUL_MMA(matmul_mma_f16_128x128_w8, 128, 128, 32, 64, 32, 3, kTileBarrier)
HAL_MATMUL_MMA(matmul_mma_f16_64x64, 64, 64, 32, 32, 32, 3, kTileBarrier)
