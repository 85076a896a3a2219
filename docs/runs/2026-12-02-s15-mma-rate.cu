// Device probe (session 15): the issue rate of mma.sync on the H200, f16 inputs with f32 accumulation
// (HMMA.16816.F32) against int8 (IMMA.16832.S8.S8), for the estimate at the end of docs/PERF.md's "What bounds
// the default now". Not part of the build; run by docs/runs/2026-12-02-s15-mma-rate.py (NVRTC and the driver
// API through ctypes, so it needs no CUDA toolkit on the device). Each warp keeps CHAINS independent accumulator
// chains, ITERS mmas deep each; the operands are constants (their values do not change the tensor pipe's rate).
#define CHAINS 8
extern "C" __global__ void hmma_f16_f32(float* out, int iters) {
    const unsigned a = 0x3C003C00u, b = 0x3C003C00u;  // f16 pairs (1, 1)
    float c[CHAINS][4];
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < CHAINS; ++j) {
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, {%0,%1,%2,%3};\n"
                         : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3]) : "r"(a), "r"(b));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void imma_s8_s32(float* out, int iters) {
    const unsigned a = 0x01010101u, b = 0x01010101u;
    int c[CHAINS][4];
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < CHAINS; ++j) {
            asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, {%0,%1,%2,%3};\n"
                         : "+r"(c[j][0]), "+r"(c[j][1]), "+r"(c[j][2]), "+r"(c[j][3]) : "r"(a), "r"(b));
        }
    }
    int s = 0;
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)s;
}
