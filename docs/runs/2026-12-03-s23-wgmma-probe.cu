// Device probe (session 23): wgmma chunk loops whose per-output work a chunk is two integer operations, for docs/PERF.md
// log 43. Not part of the build; it reuses session 22's helpers and data layout (the values are arbitrary bytes: the
// instruction stream, not the result, is what is timed); run by docs/runs/2026-12-02-s22-loop-probe.py --source.
//
// Session 22's `wgmma_w8` ran a chunk's two wgmmas in series (H, a pass of x64, then L onto the same registers) and
// paid the int_per32 epilogue (a conversion and an fma an output). Here:
// TWO_SETS: H and L in their own accumulators, both wgmmas in flight at once (no pass between them);
// MULTIPLES: mode int_per32_multiples' epilogue, S += m[c] * (64 H + L) in integers (a funnel-shift LEA and an IMAD),
//     converted and scaled once a super-block (NUMERICS.md 5 in the patch of log 42);
// the segment sums live in shared memory ([output / 4][thread] float4s, read and written once a super-block), which
// is what lets two sets of 64 accumulators and the super-block sums fit 255 registers;
// WGS warpgroups of 64 rows x 128 tokens a block.
#include "2026-12-02-s22-loop-probe.cu"
namespace std {
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
}

// EPILOGUE false (ablation, wrong values): the accumulators are only summed at the window end.
// TENSOR false (ablation): no wgmma, the accumulators' registers made opaque instead (the epilogue and fold alone).
template <bool TWO_SETS, bool MULTIPLES, bool NO_FOLD, int WGS, bool EPILOGUE = true, bool TENSOR = true>
__device__ __forceinline__ void wgmma_sets_loop(float* out, int windows) {
    constexpr int THREADS = 128 * WGS, ROWS = 64 * WGS, OUTPUTS = 64;
    constexpr int TOKENS_OFFSET = ROWS * W_STRIDE, SCALES_OFFSET = TOKENS_OFFSET + TOKENS * 256;
    constexpr int SEGMENT_OFFSET = SCALES_OFFSET + (CHUNKS + 1) * TOKENS * 4;
    constexpr int BYTES = SEGMENT_OFFSET + OUTPUTS * THREADS * 4;
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const uint8* rows = shared + warp * 16 * W_STRIDE;
    const uint8* block = rows + group * W_STRIDE;
    const uint8* tokens = shared + TOKENS_OFFSET;
    const float* lane_scales = (const float*)(shared + SCALES_OFFSET) + 4 * quad;
    uint32x4* lane_segment = (uint32x4*)(shared + SEGMENT_OFFSET) + threadIdx.x;
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
    int high_acc[OUTPUTS], low_acc[TWO_SETS ? OUTPUTS : 1];
    int superblock_int[MULTIPLES ? OUTPUTS : 1];
    float superblock[MULTIPLES ? 1 : OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        if constexpr (MULTIPLES) superblock_int[o] = 0; else superblock[o] = 0.0f;
        lane_total[o * 132 * 512] = 0.0f;
    }
#pragma unroll
    for (int q = 0; q < OUTPUTS / 4; ++q) lane_segment[q * THREADS] = uint32x4{0u, 0u, 0u, 0u};
    uint32 high[2][4], low[2][4];
    for (int window = 0; window < windows; ++window) {
        fold_chunk(high[0], low[0], block, 0, quad, NO_FOLD);
#pragma unroll
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            const int set = chunk % 2;
            const unsigned long long b = token_descriptor(tokens + 2 * chunk * 16 * 128);
            if (!TENSOR) {
                if (chunk + 1 < CHUNKS) fold_chunk(high[1 - set], low[1 - set], block, chunk + 1, quad, NO_FOLD);
#pragma unroll
                for (int i = 0; i < 4; ++i) high_acc[i] ^= (int)(high[set][i] ^ low[set][i]);
                wgmma_settled(high_acc);
                if constexpr (TWO_SETS) wgmma_settled(low_acc);
            } else {
            wgmma_fence();
            // Without the epilogue each chunk's wgmmas accumulate onto the last (else ptxas drops them as dead).
            wgmma_rows_in_registers(high_acc, high[set], b, EPILOGUE ? 0 : chunk);
            if constexpr (TWO_SETS) wgmma_rows_in_registers(low_acc, low[set], b, EPILOGUE ? 0 : chunk);
            wgmma_commit();
            if (chunk + 1 < CHUNKS) fold_chunk(high[1 - set], low[1 - set], block, chunk + 1, quad, NO_FOLD);
            wgmma_wait_all();
            wgmma_settled(high_acc);
            if constexpr (TWO_SETS) {
                wgmma_settled(low_acc);
            } else {
#pragma unroll
                for (int o = 0; o < OUTPUTS; ++o) high_acc[o] = (int)__funnelshift_l(0u, (uint32)high_acc[o], 6);
                wgmma_fence();
                wgmma_rows_in_registers(high_acc, low[set], b, 1);
                wgmma_commit();
                wgmma_wait_all();
                wgmma_settled(high_acc);
            }
            }
            if constexpr (!EPILOGUE) {
                if (chunk == CHUNKS - 1) {
#pragma unroll
                    for (int o = 0; o < OUTPUTS; ++o) superblock_int[MULTIPLES ? o : 0] += high_acc[o] + low_acc[TWO_SETS ? o : 0];
                }
                continue;
            }
#pragma unroll
            for (int pair = 0; pair < 16; pair += 2) {
                float s[4];
                load_four(s, lane_scales + chunk * TOKENS + 16 * (pair / 2));
#pragma unroll
                for (int fn = pair; fn < pair + 2; ++fn) {
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const int o = fn * 4 + c;
                        const int i32 = TWO_SETS ? (int)__funnelshift_l(0u, (uint32)high_acc[o], 6) + low_acc[TWO_SETS ? o : 0] : high_acc[o];
                        if constexpr (MULTIPLES) {
                            superblock_int[o] += __float_as_int(s[2 * (fn - pair) + c % 2]) * i32;
                        } else {
                            superblock[o] = __fmaf_rn(s[2 * (fn - pair) + c % 2], __int2float_rn(i32), superblock[o]);
                        }
                    }
                }
            }
        }
        // The window (super-block) end: its sums into the segment in shared memory, the segment into the total every
        // fourth window.
#pragma unroll
        for (int q = 0; q < OUTPUTS / 4; ++q) {
            const uint32x4 bits = lane_segment[q * THREADS];
            float segment[4] = {__uint_as_float(bits.x), __uint_as_float(bits.y), __uint_as_float(bits.z), __uint_as_float(bits.w)};
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int o = 4 * q + c;
                const int row = group + 8 * (c / 2);
                const float weight_d = f16_to_f32(*(const unsigned short*)(rows + row * W_STRIDE + Q6K_D));
                if constexpr (MULTIPLES) {
                    const float token_d = lane_scales[CHUNKS * TOKENS + (o / 8) * 16 + o % 2];
                    segment[c] = __fmaf_rn(__fmul_rn(weight_d, token_d), __int2float_rn(superblock_int[o]), segment[c]);
                    superblock_int[o] = 0;
                } else {
                    segment[c] = __fmaf_rn(weight_d, superblock[o], segment[c]);
                    superblock[o] = 0.0f;
                }
                if (window % 4 == 3) {
                    lane_total[o * 132 * 512] = __fadd_rn(lane_total[o * 132 * 512], segment[c]);
                    segment[c] = 0.0f;
                }
            }
            lane_segment[q * THREADS] = uint32x4{__float_as_uint(segment[0]), __float_as_uint(segment[1]), __float_as_uint(segment[2]), __float_as_uint(segment[3])};
        }
    }
}
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_multiples(float* out, int windows) { wgmma_sets_loop<true, true, false, 2>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_multiples_no_fold(float* out, int windows) { wgmma_sets_loop<true, true, true, 2>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_per32(float* out, int windows) { wgmma_sets_loop<true, false, false, 2>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma1_multiples(float* out, int windows) { wgmma_sets_loop<false, true, false, 2>(out, windows); }
extern "C" __global__ void __launch_bounds__(384, 1) wgmma1_multiples_wg3(float* out, int windows) { wgmma_sets_loop<false, true, false, 3>(out, windows); }
extern "C" __global__ void __launch_bounds__(384, 1) wgmma1_per32_wg3(float* out, int windows) { wgmma_sets_loop<false, false, false, 3>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_tensor_only(float* out, int windows) { wgmma_sets_loop<true, true, true, 2, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_fold_only(float* out, int windows) { wgmma_sets_loop<true, true, false, 2, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma2_multiples_no_tensor(float* out, int windows) { wgmma_sets_loop<true, true, false, 2, true, false>(out, windows); }

// ---- the tensor work alone (lease 1, second call: wgmma2_tensor_only took 683 cycles a chunk, 2.7x the int8 peak's
// 256): A from registers or from shared memory, B without swizzle or with the 128-byte swizzle, a wait after every
// chunk or one a window. A at byte 0 (64 rows x 128 bytes a k-block and warpgroup), B (the 128 tokens) at 32768.
__device__ __forceinline__ unsigned long long swizzled_descriptor(const uint8* start) {
    // 128-byte swizzle, K-major: rows of 128 bytes, 8-row atoms 1024 bytes apart (SBO); LBO unused (1).
    const unsigned long long address = (shared_address(start) & 0x3FFFFu) >> 4;
    return address | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void wgmma_rows_in_shared(int (&acc)[64], unsigned long long a, unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31]), "+r"(acc[32]), "+r"(acc[33]), "+r"(acc[34]), "+r"(acc[35]), "+r"(acc[36]), "+r"(acc[37]), "+r"(acc[38]), "+r"(acc[39]), "+r"(acc[40]), "+r"(acc[41]), "+r"(acc[42]), "+r"(acc[43]), "+r"(acc[44]), "+r"(acc[45]), "+r"(acc[46]), "+r"(acc[47]), "+r"(acc[48]), "+r"(acc[49]), "+r"(acc[50]), "+r"(acc[51]), "+r"(acc[52]), "+r"(acc[53]), "+r"(acc[54]), "+r"(acc[55]), "+r"(acc[56]), "+r"(acc[57]), "+r"(acc[58]), "+r"(acc[59]), "+r"(acc[60]), "+r"(acc[61]), "+r"(acc[62]), "+r"(acc[63])
                 : "l"(a), "l"(b), "r"(accumulate));
}
template <bool A_SHARED, bool SWIZZLE, bool WAIT_EACH>
__device__ __forceinline__ void tensor_loop(float* out, int windows) {
    constexpr int THREADS = 256, B_OFFSET = 32768, BYTES = 65536;
    extern __shared__ __align__(1024) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, wg = warp / 4;
    uint32 a[2][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[0][i] = ((const uint32*)shared)[threadIdx.x * 4 + i], a[1][i] = a[0][i] ^ 0x01010101u;
    int high_acc[64], low_acc[64];
#pragma unroll
    for (int o = 0; o < 64; ++o) high_acc[o] = low_acc[o] = 0;
    for (int window = 0; window < windows; ++window) {
#pragma unroll
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            const unsigned long long b = SWIZZLE ? swizzled_descriptor(shared + B_OFFSET + (chunk / 4) * 16384 + (chunk % 4) * 32)
                                                 : token_descriptor(shared + B_OFFSET + 2 * chunk * 16 * 128);
            const unsigned long long a_high = swizzled_descriptor(shared + wg * 16384 + (chunk / 4) * 8192 + (chunk % 4) * 32);
            const unsigned long long a_low = swizzled_descriptor(shared + 4096 + wg * 16384 + (chunk / 4) * 8192 + (chunk % 4) * 32);
            wgmma_fence();
            if (A_SHARED) {
                wgmma_rows_in_shared(high_acc, a_high, b, 1);
                wgmma_rows_in_shared(low_acc, a_low, b, 1);
            } else {
                wgmma_rows_in_registers(high_acc, a[0], b, 1);
                wgmma_rows_in_registers(low_acc, a[1], b, 1);
            }
            wgmma_commit();
            if (WAIT_EACH) wgmma_wait_all();
        }
        if (!WAIT_EACH) wgmma_wait_all();
    }
    wgmma_settled(high_acc);
    wgmma_settled(low_acc);
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
#pragma unroll
    for (int o = 0; o < 64; ++o) lane_total[o * 132 * 512] = (float)(high_acc[o] + low_acc[o]);
}
extern "C" __global__ void __launch_bounds__(256, 1) tensor_rs(float* out, int windows) { tensor_loop<false, false, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_rs_nowait(float* out, int windows) { tensor_loop<false, false, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_rs_swizzle(float* out, int windows) { tensor_loop<false, true, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_rs_swizzle_nowait(float* out, int windows) { tensor_loop<false, true, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_ss_swizzle(float* out, int windows) { tensor_loop<true, true, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) tensor_ss_swizzle_nowait(float* out, int windows) { tensor_loop<true, true, false>(out, windows); }

// ---- halves (the software pipeline the register budget allows): each warpgroup's 64 x 128 tile as two halves of 64
// tokens, H and L accumulators for each (4 x 32 registers), so that one half's wgmmas run while the warps convert the
// other half's: wgmma(half 1, chunk c) | epilogue(half 0, c) | wgmma(half 0, c + 1) | epilogue(half 1, c). The
// super-block sums S (64) as in wgmma2_multiples, the segments in shared memory.
__device__ __forceinline__ void wgmma_n64_rows_in_registers(int (&acc)[32], const uint32 (&a)[4], unsigned long long b) {
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 0;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
__device__ __forceinline__ void wgmma_wait_one() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }
__device__ __forceinline__ void settled32(int (&acc)[32]) {
#pragma unroll
    for (int o = 0; o < 32; ++o) asm volatile("" : "+r"(acc[o]));
}
// S[32 h + o] += m * (64 H + L) for half h's 32 accumulators a lane (MULTIPLES), or int_per32's conversion and fma.
template <typename Sum>
__device__ __forceinline__ void half_epilogue(Sum (&superblock_int)[64], const int (&high_acc)[32], const int (&low_acc)[32], const float* scales, int half) {
#pragma unroll
    for (int pair = 0; pair < 8; pair += 2) {
        float s[4];
        load_four(s, scales + 64 * half + 16 * (pair / 2));
#pragma unroll
        for (int fn = pair; fn < pair + 2; ++fn) {
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int o = fn * 4 + c;
                const int i32 = (int)__funnelshift_l(0u, (uint32)high_acc[o], 6) + low_acc[o];
                if constexpr (sizeof(Sum) == 4 && Sum(0.5f) == Sum(0)) {
                    superblock_int[32 * half + o] += __float_as_int(s[2 * (fn - pair) + c % 2]) * i32;
                } else {
                    superblock_int[32 * half + o] = __fmaf_rn(s[2 * (fn - pair) + c % 2], __int2float_rn(i32), superblock_int[32 * half + o]);
                }
            }
        }
    }
}
template <bool NO_FOLD, bool MULTIPLES = true>
__device__ __forceinline__ void wgmma_halves_loop(float* out, int windows) {
    using Sum = typename std::conditional<MULTIPLES, int, float>::type;
    constexpr int THREADS = 256, ROWS = 128, OUTPUTS = 64;
    constexpr int TOKENS_OFFSET = ROWS * W_STRIDE, SCALES_OFFSET = TOKENS_OFFSET + TOKENS * 256;
    constexpr int SEGMENT_OFFSET = SCALES_OFFSET + (CHUNKS + 1) * TOKENS * 4;
    constexpr int BYTES = SEGMENT_OFFSET + OUTPUTS * THREADS * 4;
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, group = (threadIdx.x % 32) / 4, quad = threadIdx.x % 4;
    const uint8* rows = shared + warp * 16 * W_STRIDE;
    const uint8* block = rows + group * W_STRIDE;
    const uint8* tokens = shared + TOKENS_OFFSET;
    const float* lane_scales = (const float*)(shared + SCALES_OFFSET) + 4 * quad;
    uint32x4* lane_segment = (uint32x4*)(shared + SEGMENT_OFFSET) + threadIdx.x;
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
    int high0[32], low0[32], high1[32], low1[32];
    Sum superblock_int[OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        superblock_int[o] = 0;
        lane_total[o * 132 * 512] = 0.0f;
    }
#pragma unroll
    for (int q = 0; q < OUTPUTS / 4; ++q) lane_segment[q * THREADS] = uint32x4{0u, 0u, 0u, 0u};
    uint32 high[2][4], low[2][4];
    for (int window = 0; window < windows; ++window) {
        // The pipeline fills and drains within a window: ptxas serializes every wgmma (C7514) when a wgmma's
        // accumulators are read in a later iteration of a loop it does not unroll.
        fold_chunk(high[0], low[0], block, 0, quad, NO_FOLD);
        wgmma_fence();
        wgmma_n64_rows_in_registers(high0, high[0], token_descriptor(tokens));
        wgmma_n64_rows_in_registers(low0, low[0], token_descriptor(tokens));
        wgmma_commit();
#pragma unroll
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            const int set = chunk % 2, next = chunk + 1;
            // Half 1 of this chunk (tokens 64..127: core matrices 8.., 1024 bytes on).
            const unsigned long long b1 = token_descriptor(tokens + 2 * chunk * 16 * 128 + 1024);
            wgmma_fence();
            wgmma_n64_rows_in_registers(high1, high[set], b1);
            wgmma_n64_rows_in_registers(low1, low[set], b1);
            wgmma_commit();
            if (next < CHUNKS) fold_chunk(high[1 - set], low[1 - set], block, next, quad, NO_FOLD);
            wgmma_wait_one();  // half 0 of this chunk has landed
            settled32(high0);
            settled32(low0);
            half_epilogue(superblock_int, high0, low0, lane_scales + chunk * TOKENS, 0);
            if (next < CHUNKS) {
                // Half 0 of the next chunk.
                const unsigned long long b0 = token_descriptor(tokens + 2 * next * 16 * 128);
                wgmma_fence();
                wgmma_n64_rows_in_registers(high0, high[1 - set], b0);
                wgmma_n64_rows_in_registers(low0, low[1 - set], b0);
                wgmma_commit();
                wgmma_wait_one();  // half 1 of this chunk has landed
            } else {
                wgmma_wait_all();
            }
            settled32(high1);
            settled32(low1);
            half_epilogue(superblock_int, high1, low1, lane_scales + chunk * TOKENS, 1);
        }
#pragma unroll
        for (int q = 0; q < OUTPUTS / 4; ++q) {
            const uint32x4 bits = lane_segment[q * THREADS];
            float segment[4] = {__uint_as_float(bits.x), __uint_as_float(bits.y), __uint_as_float(bits.z), __uint_as_float(bits.w)};
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int o = 4 * q + c;
                const float weight_d = f16_to_f32(*(const unsigned short*)(rows + (group + 8 * (c / 2)) * W_STRIDE + Q6K_D));
                const float token_d = lane_scales[CHUNKS * TOKENS + (o / 8) * 16 + o % 2];
                if constexpr (MULTIPLES) {
                    segment[c] = __fmaf_rn(__fmul_rn(weight_d, token_d), __int2float_rn(superblock_int[o]), segment[c]);
                } else {
                    segment[c] = __fmaf_rn(weight_d, superblock_int[o], segment[c]);
                }
                superblock_int[o] = 0;
                if (window % 4 == 3) {
                    lane_total[o * 132 * 512] = __fadd_rn(lane_total[o * 132 * 512], segment[c]);
                    segment[c] = 0.0f;
                }
            }
            lane_segment[q * THREADS] = uint32x4{__float_as_uint(segment[0]), __float_as_uint(segment[1]), __float_as_uint(segment[2]), __float_as_uint(segment[3])};
        }
    }
}
extern "C" __global__ void __launch_bounds__(256, 1) halves_multiples(float* out, int windows) { wgmma_halves_loop<false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) halves_multiples_no_fold(float* out, int windows) { wgmma_halves_loop<true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) halves_per32(float* out, int windows) { wgmma_halves_loop<false, false>(out, windows); }

// ---- four products (lease 2's lead): activations as 12-bit integers per 256 values, v = 64 vh + vl, two int8 planes,
// times the fold's two weight planes: S = 4096 X + 64 Y + Z with X = sum h vh, Y = sum (h vl + l vh), Z = sum l vl, all
// three accumulated by wgmma over the whole super-block (|S| < 256 * 4096 * 2047 < 2^31, so exact; the combine wraps
// in unsigned arithmetic). No per-chunk epilogue at all: four wgmmas a chunk and warpgroup (twice today's tensor
// work), the fold, and once a super-block the combine, one conversion and one fma an output into the segment in
// shared memory. Planes vh at TOKENS_OFFSET, vl 32768 bytes after.
// STAGGER: the second warpgroup runs a half window (4 chunks and an epilogue) first, so that the two warpgroups'
// super-block epilogues fall half a window apart and each runs while the other's wgmmas keep the tensor pipe busy.
template <bool NO_FOLD, bool STAGGER = false>
__device__ __forceinline__ void four_products_loop(float* out, int windows) {
    constexpr int THREADS = 256, ROWS = 128, OUTPUTS = 64;
    constexpr int TOKENS_OFFSET = ROWS * W_STRIDE, SCALES_OFFSET = TOKENS_OFFSET + 2 * TOKENS * 256;
    constexpr int SEGMENT_OFFSET = SCALES_OFFSET + TOKENS * 4;
    constexpr int BYTES = SEGMENT_OFFSET + OUTPUTS * THREADS * 4;
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, group = (threadIdx.x % 32) / 4, quad = threadIdx.x % 4;
    const uint8* rows = shared + warp * 16 * W_STRIDE;
    const uint8* block = rows + group * W_STRIDE;
    const uint8* tokens_high = shared + TOKENS_OFFSET;
    const uint8* tokens_low = tokens_high + TOKENS * 256;
    const float* lane_token_d = (const float*)(shared + SCALES_OFFSET) + 2 * quad;
    uint32x4* lane_segment = (uint32x4*)(shared + SEGMENT_OFFSET) + threadIdx.x;
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
    int x[OUTPUTS], y[OUTPUTS], z[OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        x[o] = y[o] = z[o] = 0;
        lane_total[o * 132 * 512] = 0.0f;
    }
#pragma unroll
    for (int q = 0; q < OUTPUTS / 4; ++q) lane_segment[q * THREADS] = uint32x4{0u, 0u, 0u, 0u};
    uint32 high[2][4], low[2][4];
    // One window from chunk FIRST (the stagger's half window: FIRST = 4, window -1) through its super-block epilogue.
    auto run_window = [&](const int FIRST, int window) {
        fold_chunk(high[0], low[0], block, FIRST, quad, NO_FOLD);
#pragma unroll
        for (int chunk = FIRST; chunk < CHUNKS; ++chunk) {
            const int set = (chunk - FIRST) % 2;
            const unsigned long long bh = token_descriptor(tokens_high + 2 * chunk * 16 * 128);
            const unsigned long long bl = token_descriptor(tokens_low + 2 * chunk * 16 * 128);
            const int accumulate = chunk > FIRST;
            wgmma_fence();
            wgmma_rows_in_registers(x, high[set], bh, accumulate);
            wgmma_rows_in_registers(y, high[set], bl, accumulate);
            wgmma_rows_in_registers(y, low[set], bh, 1);
            wgmma_rows_in_registers(z, low[set], bl, accumulate);
            wgmma_commit();
            if (chunk + 1 < CHUNKS) {
                fold_chunk(high[1 - set], low[1 - set], block, chunk + 1, quad, NO_FOLD);
                wgmma_wait_one();  // the previous chunk's wgmmas are done with their fragment set
            }
        }
        wgmma_wait_all();
        wgmma_settled(x);
        wgmma_settled(y);
        wgmma_settled(z);
#pragma unroll
        for (int q = 0; q < OUTPUTS / 4; ++q) {
            const uint32x4 bits = lane_segment[q * THREADS];
            float segment[4] = {__uint_as_float(bits.x), __uint_as_float(bits.y), __uint_as_float(bits.z), __uint_as_float(bits.w)};
            const float2 token_d = *(const float2*)(lane_token_d + 8 * q);
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int o = 4 * q + c;
                const float weight_d = f16_to_f32(*(const unsigned short*)(rows + (group + 8 * (c / 2)) * W_STRIDE + Q6K_D));
                const int s = (int)((uint32)x[o] * 4096u + (uint32)y[o] * 64u + (uint32)z[o]);
                segment[c] = __fmaf_rn(__fmul_rn(weight_d, c % 2 ? token_d.y : token_d.x), __int2float_rn(s), segment[c]);
                if ((window & 3) == 3) {
                    lane_total[o * 132 * 512] = __fadd_rn(lane_total[o * 132 * 512], segment[c]);
                    segment[c] = 0.0f;
                }
            }
            lane_segment[q * THREADS] = uint32x4{__float_as_uint(segment[0]), __float_as_uint(segment[1]), __float_as_uint(segment[2]), __float_as_uint(segment[3])};
        }
    };
    // The warpgroup index as a warp-uniform value (a shuffle's), so that ptxas sees the branch as uniform.
    if (STAGGER && __shfl_sync(0xFFFFFFFFu, threadIdx.x / 128, 0) == 1) run_window(CHUNKS / 2, -1);
    for (int window = 0; window < windows; ++window) run_window(0, window);
}
extern "C" __global__ void __launch_bounds__(256, 1) four_products_stagger(float* out, int windows) { four_products_loop<false, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) four_products(float* out, int windows) { four_products_loop<false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) four_products_no_fold(float* out, int windows) { four_products_loop<true>(out, windows); }
