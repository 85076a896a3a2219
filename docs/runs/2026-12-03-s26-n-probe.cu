// Device probe (session 26, docs/PERF.md log 52): how fast the int8 wgmma runs the int12 engine's chunk (four
// m64nNk32 wgmmas a warpgroup: X, Y twice, Z; A from registers, B from shared memory in the 64-byte swizzle) at
// N = 64, 80, 96 and 128 tokens a warpgroup, two warpgroups a block, one block an SM, data resident, no fold and no
// epilogue: the tensor floor of each tile width. Run by docs/runs/2026-12-02-s22-loop-probe.py --source.
#include "2026-12-02-s22-loop-probe.cu"
__device__ __forceinline__ unsigned long long swizzled_64b(const uint8* start) {
    const unsigned long long address = (shared_address(start) & 0x3FFFFu) >> 4;
    return address | (1ull << 16) | ((512ull >> 4) << 32) | (2ull << 62);
}
__device__ __forceinline__ void wgmma_n64(int (&acc)[32], const uint32 (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_n80(int (&acc)[40], const uint32 (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %45, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n80k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, {%40, %41, %42, %43}, %44, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31]), "+r"(acc[32]), "+r"(acc[33]), "+r"(acc[34]), "+r"(acc[35]), "+r"(acc[36]), "+r"(acc[37]), "+r"(acc[38]), "+r"(acc[39])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_n96(int (&acc)[48], const uint32 (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %53, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n96k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, {%48, %49, %50, %51}, %52, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31]), "+r"(acc[32]), "+r"(acc[33]), "+r"(acc[34]), "+r"(acc[35]), "+r"(acc[36]), "+r"(acc[37]), "+r"(acc[38]), "+r"(acc[39]), "+r"(acc[40]), "+r"(acc[41]), "+r"(acc[42]), "+r"(acc[43]), "+r"(acc[44]), "+r"(acc[45]), "+r"(acc[46]), "+r"(acc[47])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_n128(int (&acc)[64], const uint32 (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31]), "+r"(acc[32]), "+r"(acc[33]), "+r"(acc[34]), "+r"(acc[35]), "+r"(acc[36]), "+r"(acc[37]), "+r"(acc[38]), "+r"(acc[39]), "+r"(acc[40]), "+r"(acc[41]), "+r"(acc[42]), "+r"(acc[43]), "+r"(acc[44]), "+r"(acc[45]), "+r"(acc[46]), "+r"(acc[47]), "+r"(acc[48]), "+r"(acc[49]), "+r"(acc[50]), "+r"(acc[51]), "+r"(acc[52]), "+r"(acc[53]), "+r"(acc[54]), "+r"(acc[55]), "+r"(acc[56]), "+r"(acc[57]), "+r"(acc[58]), "+r"(acc[59]), "+r"(acc[60]), "+r"(acc[61]), "+r"(acc[62]), "+r"(acc[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

template <int N, bool WAIT_ONE>
__device__ __forceinline__ void tensor_n_loop(float* out, int windows) {
    constexpr int THREADS = 256, REGS = N / 2;
    extern __shared__ __align__(1024) uint8 shared[];
    fill(shared, 8 * N * 64, THREADS);
    uint32 a[2][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[0][i] = ((const uint32*)shared)[threadIdx.x * 4 + i], a[1][i] = a[0][i] ^ 0x01010101u;
    int x[REGS], y[REGS], z[REGS];
#pragma unroll
    for (int o = 0; o < REGS; ++o) x[o] = y[o] = z[o] = 0;
    for (int window = 0; window < windows; ++window) {
#pragma unroll
        for (int chunk = 0; chunk < 8; ++chunk) {
            const unsigned long long vh = swizzled_64b(shared + chunk * N * 64);
            const unsigned long long vl = swizzled_64b(shared + chunk * N * 64 + 32);
            wgmma_fence();
            if constexpr (N == 64) { wgmma_n64(x, a[0], vh, 1); wgmma_n64(y, a[0], vl, 1); wgmma_n64(y, a[1], vh, 1); wgmma_n64(z, a[1], vl, 1); }
            if constexpr (N == 80) { wgmma_n80(x, a[0], vh, 1); wgmma_n80(y, a[0], vl, 1); wgmma_n80(y, a[1], vh, 1); wgmma_n80(z, a[1], vl, 1); }
            if constexpr (N == 96) { wgmma_n96(x, a[0], vh, 1); wgmma_n96(y, a[0], vl, 1); wgmma_n96(y, a[1], vh, 1); wgmma_n96(z, a[1], vl, 1); }
            if constexpr (N == 128) { wgmma_n128(x, a[0], vh, 1); wgmma_n128(y, a[0], vl, 1); wgmma_n128(y, a[1], vh, 1); wgmma_n128(z, a[1], vl, 1); }
            wgmma_commit();
            if (WAIT_ONE) asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
#pragma unroll
    for (int o = 0; o < REGS; ++o) asm volatile("" : "+r"(x[o]), "+r"(y[o]), "+r"(z[o]));
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
#pragma unroll
    for (int o = 0; o < REGS; ++o) lane_total[o * 132 * 512] = (float)(x[o] + y[o] + z[o]);
}
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n64(float* out, int windows) { tensor_n_loop<64, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n64_nowait(float* out, int windows) { tensor_n_loop<64, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n80(float* out, int windows) { tensor_n_loop<80, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n80_nowait(float* out, int windows) { tensor_n_loop<80, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n96(float* out, int windows) { tensor_n_loop<96, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n96_nowait(float* out, int windows) { tensor_n_loop<96, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n128(float* out, int windows) { tensor_n_loop<128, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_n128_nowait(float* out, int windows) { tensor_n_loop<128, false>(out, windows); }
