// Device probe (session 22): the 128-token chunk loop of the prefill tile alone, on data that stays in shared memory
// (no copies, no waits), in four forms, for docs/PERF.md log 42. Not part of the build; the values are arbitrary bytes
// (the instruction stream, not the result, is what is timed); run by docs/runs/2026-12-02-s22-loop-probe.py.
//
// fold (today's `tma_128x128`): the warp folds `sc * (q6 - 32) = 64 h + l` into two int8 planes, two m16n8k32 IMMA
//     per 8 tokens, `64 H + L`, one conversion and one fma per output and chunk.
// k16 (the proposal): the warp only unpacks `q6 - 32` into one int8 plane, one m16n8k16 IMMA per sub-block and 8
//     tokens (half the tensor work of the fold), `sc0 * I16a + sc1 * I16b` in integers (one IMUL more an output), the
//     same conversion and fma. The same I32, so the same bits (NUMERICS.md 3).
// WARPS 8 or 12 (16 rows x 128 tokens a warp, one block an SM) or 16 (16 x 64 a warp, two along the tokens); TOTAL_IN_GLOBAL keeps the output's running total in
// global memory (read, add, write at each segment's end) instead of 64 registers a lane, so 12 warps fit 168.
typedef unsigned char uint8;
typedef signed char int8;
typedef unsigned int uint32;
struct __align__(16) uint32x4 { uint32 x, y, z, w; };
constexpr int Q6K_QL = 0, Q6K_QH = 128, Q6K_SCALES = 192, Q6K_D = 208;
constexpr int TOKENS = 128, CHUNKS = 8;
constexpr int W_STRIDE = 240, T_STRIDE = 272;

__device__ __forceinline__ uint32 byte_perm(uint32 a, uint32 b, uint32 s) {
    uint32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s));
    return r;
}
__device__ __forceinline__ uint32 shared_address(const void* p) { return (uint32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void ldmatrix_x4(uint32& a, uint32& b, uint32& c, uint32& d, const uint8* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(shared_address(p)));
}
__device__ __forceinline__ float f16_to_f32(unsigned short bits) {
    float v;
    asm("{ .reg .f16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(v) : "h"(bits));
    return v;
}
__device__ void fill(uint8* shared, int bytes, int threads) {
    for (int i = threadIdx.x; i < bytes / 4; i += threads) {
        uint32 x = i * 2654435761u + 12345u;
        x ^= x >> 13;
        ((uint32*)shared)[i] = (x & 0x3F3F3F3Fu) | 0x00010001u;
    }
    __syncthreads();
}
__device__ __forceinline__ void load_four(float (&s)[4], const float* p) {
    const uint32x4 w = *(const uint32x4*)p;
    s[0] = __uint_as_float(w.x); s[1] = __uint_as_float(w.y); s[2] = __uint_as_float(w.z); s[3] = __uint_as_float(w.w);
}
__device__ __forceinline__ int pair_token(int fragment, int row) {
    const int quad = row / 2;
    return 4 * quad + 2 * (fragment ^ (quad / 2)) + row % 2;
}

// ---- the fold (today) -----------------------------------------------------------------------------------------
__device__ __forceinline__ uint32 q6_bytes_times_4(uint32 ql, uint32 qh, int quarter) {
    const uint32 nibbles = quarter < 2 ? (ql << 2) & 0x3C3C3C3Cu : (ql >> 2) & 0x3C3C3C3Cu;
    return nibbles | ((qh << (6 - 2 * quarter)) & 0xC0C0C0C0u);
}
__device__ __forceinline__ void fold_word(uint32 q6x4, int scale, uint32& high, uint32& low) {
    const uint32 even = q6x4 & 0x00FF00FFu, odd = (q6x4 >> 8) & 0x00FF00FFu;
    const uint32 bias = (uint32)scale * 0xFF7FFF80u + 0x80008000u;
    const uint32 even_u = even * (uint32)scale + bias, odd_u = odd * (uint32)scale + bias;
    high = byte_perm(even_u, odd_u, 0x7351u) ^ 0x80808080u;
    low = byte_perm(even_u, odd_u, 0x6240u) >> 2;
}
__device__ __forceinline__ void mma_k32(int (&d)[4], const uint32 (&a)[4], const uint32 (&b)[2]) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(0));
}

__device__ __forceinline__ void mma_k32_onto(int (&d)[4], const uint32 (&a)[4], const uint32 (&b)[2], uint32 c) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c));
}

// ---- k16: one signed plane, one IMMA a sub-block --------------------------------------------------------------
// q6 in [0, 63] per byte to q6 - 32 as int8: (q6 + 128 - 32) has no borrow between bytes, then flip the sign bit.
__device__ __forceinline__ uint32 q6_minus_32(uint32 ql, uint32 qh, int quarter) {
    const uint32 q6 = ((quarter < 2 ? ql : ql >> 4) & 0x0F0F0F0Fu) | (((qh >> (2 * quarter)) << 4) & 0x30303030u);
    return ((q6 | 0x80808080u) - 0x20202020u) ^ 0x80808080u;
}
__device__ __forceinline__ void mma_k16(int (&d)[4], uint32 a0, uint32 a1, uint32 b) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(b), "r"(0));
}

// ABLATE (lease 3: which part of the fold's loop sets its time; the results are wrong on purpose): 1 no conversion
// (the int32's bits taken as the float), 2 no IMMA (a LOP3 a register in its place), 3 no fold (the q6 bytes taken as
// both planes).
// FLOAT_PLANES (lease 3's lead): each plane's IMMA accumulates onto a float's bits, 1.5 * 2^29 for H (ulp 64, so the
// value is 1.5 * 2^29 + 64 H) and 1.5 * 2^23 for L (ulp 1: 1.5 * 2^23 + L), both exact since |H|, |L| < 2^22; two
// FFMA by the activation scale replace the combine, the conversion and the fma, and the window end takes the offsets
// (1.5 * 2^29 + 1.5 * 2^23 times the window's sum of scales, per token) back out with one FADD.
// ABLATE 5 (lease 5): the fold's IMMAs accumulate onto a register that holds zero (windows - windows, opaque to ptxas)
// instead of RZ; ABLATE 6: the float planes' IMMAs onto RZ (wrong values; what the magic's register reads cost).
// INT_SUPERBLOCK (lease 7): activation scales per 32 as integer multiples m[c] <= 15 of one scale per 256, so the
// super-block's sum stays an integer, sum of m[c] (64 H + L), and is converted and scaled once a window.
template <int WARPS, int WARP_TOKENS, bool K16, bool TOTAL_IN_GLOBAL, int ABLATE = 0, bool FLOAT_PLANES = false, bool INT_SUPERBLOCK = false>
__device__ __forceinline__ void chunk_loop(float* out, int windows) {
    constexpr int WARPS_N = TOKENS / WARP_TOKENS, FRAGMENTS_N = WARP_TOKENS / 8, OUTPUTS = 4 * FRAGMENTS_N;
    constexpr int THREADS = 32 * WARPS, ROWS = 16 * WARPS / WARPS_N;
    constexpr int TOKENS_OFFSET = ROWS * W_STRIDE, SCALES_OFFSET = TOKENS_OFFSET + TOKENS * T_STRIDE;
    constexpr int BYTES = SCALES_OFFSET + CHUNKS * TOKENS * 4;
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const int warp_m = warp % (WARPS / WARPS_N), warp_n = warp / (WARPS / WARPS_N);
    const uint8* rows = shared + warp_m * 16 * W_STRIDE;
    const uint8* block = rows + group * W_STRIDE;
    const uint8* lane_tokens = shared + TOKENS_OFFSET + (warp_n * WARP_TOKENS + pair_token(lane / 16, lane % 8)) * T_STRIDE + ((lane / 8) % 2) * 16;
    const float* lane_scales = (const float*)(shared + SCALES_OFFSET) + warp_n * WARP_TOKENS + 4 * quad;
    // Output o of every lane of the grid side by side (coalesced): the grid has at most 132 x 512 lanes.
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
    uint32 zero;
    asm volatile("sub.u32 %0, %1, %1;" : "=r"(zero) : "r"(windows));
    float total[TOTAL_IN_GLOBAL ? 1 : OUTPUTS], segment[OUTPUTS], superblock[OUTPUTS];
    int superblock_int[INT_SUPERBLOCK ? OUTPUTS : 1];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        segment[o] = superblock[o] = 0.0f;
        if constexpr (INT_SUPERBLOCK) superblock_int[o] = 0;
        if constexpr (TOTAL_IN_GLOBAL) lane_total[o * 132 * 512] = 0.0f; else total[o] = 0.0f;
    }
    for (int window = 0; window < windows; ++window) {
#pragma unroll 1
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            uint32 a[4], tokens[FRAGMENTS_N][2];
            uint32 high[4], low[4];
            int sc[2][2];  // [row half][sub-block]
            const int quarter = chunk % 4;
            const uint8* low_bits = block + Q6K_QL + 64 * (chunk / 4) + 32 * (chunk % 2) + 4 * quad;
            const uint8* high_bits = block + Q6K_QH + 32 * (chunk / 4) + 4 * quad;
            const uint8* scales = block + Q6K_SCALES + 2 * chunk;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int row_offset = (i % 2) * 8 * W_STRIDE, k_offset = (i / 2) * 16;
                const uint32 ql = *(const uint32*)(low_bits + row_offset + k_offset);
                const uint32 qh = *(const uint32*)(high_bits + row_offset + k_offset);
                if constexpr (K16) {
                    a[i] = q6_minus_32(ql, qh, quarter);
                    sc[i % 2][i / 2] = (int)*(const int8*)(scales + row_offset + i / 2);
                } else if constexpr (ABLATE == 3) {
                    high[i] = q6_bytes_times_4(ql, qh, quarter);
                    low[i] = ql ^ (uint32)*(const int8*)(scales + row_offset + i / 2);
                } else {
                    fold_word(q6_bytes_times_4(ql, qh, quarter), (int)*(const int8*)(scales + row_offset + i / 2), high[i], low[i]);
                }
            }
#pragma unroll
            for (int fn = 0; fn < FRAGMENTS_N; fn += 2) {
                ldmatrix_x4(tokens[fn][0], tokens[fn][1], tokens[fn + 1][0], tokens[fn + 1][1], lane_tokens + 8 * fn * T_STRIDE + chunk * 32);
            }
#pragma unroll
            for (int pair = 0; pair < FRAGMENTS_N; pair += 2) {
                float s[4];
                load_four(s, lane_scales + chunk * TOKENS + 16 * (pair / 2));
#pragma unroll
                for (int fn = pair; fn < pair + 2; ++fn) {
                    int first[4], second[4];
                    if constexpr (K16) {
                        mma_k16(first, a[0], a[1], tokens[fn][0]);
                        mma_k16(second, a[2], a[3], tokens[fn][1]);
                    } else if constexpr (ABLATE == 2) {
#pragma unroll
                        for (int j = 0; j < 4; ++j) {
                            first[j] = (int)(high[j] ^ tokens[fn][j % 2]);
                            second[j] = (int)(low[j] ^ tokens[fn][j % 2]);
                        }
                    } else if constexpr (ABLATE == 5) {
                        mma_k32_onto(first, high, tokens[fn], zero);
                        mma_k32_onto(second, low, tokens[fn], zero);
                    } else if constexpr (FLOAT_PLANES && ABLATE == 6) {
                        mma_k32(first, high, tokens[fn]);
                        mma_k32(second, low, tokens[fn]);
                    } else if constexpr (FLOAT_PLANES) {
                        mma_k32_onto(first, high, tokens[fn], 0x4E400000u);
                        mma_k32_onto(second, low, tokens[fn], 0x4B400000u);
                    } else {
                        mma_k32(first, high, tokens[fn]);
                        mma_k32(second, low, tokens[fn]);
                    }
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const int o = fn * 4 + c;
                        if constexpr (INT_SUPERBLOCK) {
                            const int multiple = __float_as_int(s[2 * (fn - pair) + c % 2]);  // m[c], stored as an int in the real layout
                            superblock_int[o] += multiple * (64 * first[c] + second[c]);
                            continue;
                        }
                        if constexpr (FLOAT_PLANES) {
                            const float scale = s[2 * (fn - pair) + c % 2];
                            superblock[o] = __fmaf_rn(scale, __int_as_float(first[c]), __fmaf_rn(scale, __int_as_float(second[c]), superblock[o]));
                            continue;
                        }
                        const int i32 = K16 ? sc[c / 2][0] * first[c] + sc[c / 2][1] * second[c]
                                        : 64 * first[c] + second[c];
                        const float value = ABLATE == 1 ? __int_as_float(i32) : __int2float_rn(i32);
                        superblock[o] = __fmaf_rn(s[2 * (fn - pair) + c % 2], value, superblock[o]);
                    }
                }
            }
        }
        // The window end: the super-block's sums into the segment, the segment into the total every fourth window.
#pragma unroll
        for (int o = 0; o < OUTPUTS; ++o) {
            const int row = group + 8 * ((o % 4) / 2);
            if constexpr (FLOAT_PLANES) superblock[o] = __fadd_rn(superblock[o], lane_scales[(o / 8) * 16 + o % 2]);
            if constexpr (INT_SUPERBLOCK) {
                superblock[o] = __fmul_rn(lane_scales[(o / 8) * 16 + o % 2], __int2float_rn(superblock_int[o]));
                superblock_int[o] = 0;
            }
            segment[o] = __fmaf_rn(f16_to_f32(*(const unsigned short*)(rows + row * W_STRIDE + Q6K_D)), superblock[o], segment[o]);
            superblock[o] = 0.0f;
            if (window % 4 == 3) {
                if constexpr (TOTAL_IN_GLOBAL) lane_total[o * 132 * 512] = __fadd_rn(lane_total[o * 132 * 512], segment[o]);
                else total[o] = __fadd_rn(total[o], segment[o]);
                segment[o] = 0.0f;
            }
        }
    }
    if constexpr (!TOTAL_IN_GLOBAL) {
#pragma unroll
        for (int o = 0; o < OUTPUTS; ++o) lane_total[o * 132 * 512] = total[o];
    }
}
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8(float* out, int windows) { chunk_loop<8, 128, false, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) k16_w8(float* out, int windows) { chunk_loop<8, 128, true, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_global(float* out, int windows) { chunk_loop<8, 128, false, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) k16_w8_global(float* out, int windows) { chunk_loop<8, 128, true, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(384, 1) fold_w12(float* out, int windows) { chunk_loop<12, 128, false, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(384, 1) k16_w12(float* out, int windows) { chunk_loop<12, 128, true, true>(out, windows); }
// 16 warps of 16 x 64 (two along the tokens), 128 registers: the fold is shared by half as many tokens.
extern "C" __global__ void __launch_bounds__(512, 1) fold_w16_n64(float* out, int windows) { chunk_loop<16, 64, false, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(512, 1) k16_w16_n64(float* out, int windows) { chunk_loop<16, 64, true, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_no_i2f(float* out, int windows) { chunk_loop<8, 128, false, false, 1>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_no_imma(float* out, int windows) { chunk_loop<8, 128, false, false, 2>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_no_fold(float* out, int windows) { chunk_loop<8, 128, false, false, 3>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) float_planes_w8(float* out, int windows) { chunk_loop<8, 128, false, false, 0, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) float_planes_w8_no_fold(float* out, int windows) { chunk_loop<8, 128, false, false, 3, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(384, 1) float_planes_w12(float* out, int windows) { chunk_loop<12, 128, false, true, 0, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_c_register(float* out, int windows) { chunk_loop<8, 128, false, false, 5>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) float_planes_w8_rz(float* out, int windows) { chunk_loop<8, 128, false, false, 6, true>(out, windows); }

// ---- wgmma (lease 6): the fold feeding wgmma m64n128k32 from registers, B (the tokens) from shared memory --------
// Two warpgroups of 64 rows x 128 tokens (warp w of a warpgroup folds rows 16 w .. 16 w + 15, the m16n8k32 A layout).
// One accumulator set as `wgmma_k32_regfold` keeps it: H, then x64, then L added in the same registers (no register
// reads of C by the SM), then the conversion and the fma a lane and output. FOLD_AHEAD folds the next chunk while
// the wgmmas run (two fragment sets); NO_FOLD takes the q6 bytes as both planes (the loop's floor without the fold).
__device__ __forceinline__ unsigned long long token_descriptor(const uint8* start) {
    // No swizzle; core matrices of 8 tokens x 16 bytes, 128 bytes each: adjacent in N 128 bytes apart, in K 16 x 128.
    const unsigned long long address = (shared_address(start) & 0x3FFFFu) >> 4;
    return address | ((unsigned long long)(2048 >> 4) << 16) | ((unsigned long long)(128 >> 4) << 32);
}
__device__ __forceinline__ void wgmma_rows_in_registers(int (&acc)[64], const uint32 (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p;\n}\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]), "+r"(acc[7]), "+r"(acc[8]), "+r"(acc[9]), "+r"(acc[10]), "+r"(acc[11]), "+r"(acc[12]), "+r"(acc[13]), "+r"(acc[14]), "+r"(acc[15]), "+r"(acc[16]), "+r"(acc[17]), "+r"(acc[18]), "+r"(acc[19]), "+r"(acc[20]), "+r"(acc[21]), "+r"(acc[22]), "+r"(acc[23]), "+r"(acc[24]), "+r"(acc[25]), "+r"(acc[26]), "+r"(acc[27]), "+r"(acc[28]), "+r"(acc[29]), "+r"(acc[30]), "+r"(acc[31]), "+r"(acc[32]), "+r"(acc[33]), "+r"(acc[34]), "+r"(acc[35]), "+r"(acc[36]), "+r"(acc[37]), "+r"(acc[38]), "+r"(acc[39]), "+r"(acc[40]), "+r"(acc[41]), "+r"(acc[42]), "+r"(acc[43]), "+r"(acc[44]), "+r"(acc[45]), "+r"(acc[46]), "+r"(acc[47]), "+r"(acc[48]), "+r"(acc[49]), "+r"(acc[50]), "+r"(acc[51]), "+r"(acc[52]), "+r"(acc[53]), "+r"(acc[54]), "+r"(acc[55]), "+r"(acc[56]), "+r"(acc[57]), "+r"(acc[58]), "+r"(acc[59]), "+r"(acc[60]), "+r"(acc[61]), "+r"(acc[62]), "+r"(acc[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_settled(int (&acc)[64]) {
#pragma unroll
    for (int o = 0; o < 64; ++o) asm volatile("" : "+r"(acc[o]));
}
__device__ __forceinline__ void fold_chunk(uint32 (&high)[4], uint32 (&low)[4], const uint8* block, int chunk, int quad, bool no_fold) {
    const int quarter = chunk % 4;
    const uint8* low_bits = block + Q6K_QL + 64 * (chunk / 4) + 32 * (chunk % 2) + 4 * quad;
    const uint8* high_bits = block + Q6K_QH + 32 * (chunk / 4) + 4 * quad;
    const uint8* scales = block + Q6K_SCALES + 2 * chunk;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row_offset = (i % 2) * 8 * W_STRIDE, k_offset = (i / 2) * 16;
        const uint32 ql = *(const uint32*)(low_bits + row_offset + k_offset);
        const uint32 qh = *(const uint32*)(high_bits + row_offset + k_offset);
        if (no_fold) {
            high[i] = q6_bytes_times_4(ql, qh, quarter);
            low[i] = ql ^ (uint32)*(const int8*)(scales + row_offset + i / 2);
        } else {
            fold_word(q6_bytes_times_4(ql, qh, quarter), (int)*(const int8*)(scales + row_offset + i / 2), high[i], low[i]);
        }
    }
}
template <bool FOLD_AHEAD, bool NO_FOLD, bool INT_SUPERBLOCK = false>
__device__ __forceinline__ void wgmma_loop(float* out, int windows) {
    constexpr int THREADS = 256, ROWS = 128, OUTPUTS = 64;
    constexpr int TOKENS_OFFSET = ROWS * W_STRIDE, SCALES_OFFSET = TOKENS_OFFSET + TOKENS * 256;
    constexpr int BYTES = SCALES_OFFSET + CHUNKS * TOKENS * 4;
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, BYTES, THREADS);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const uint8* rows = shared + warp * 16 * W_STRIDE;
    const uint8* block = rows + group * W_STRIDE;
    const uint8* tokens = shared + TOKENS_OFFSET;
    const float* lane_scales = (const float*)(shared + SCALES_OFFSET) + 4 * quad;
    float* lane_total = out + (size_t)blockIdx.x * THREADS + threadIdx.x;
    int acc[OUTPUTS], superblock_int[INT_SUPERBLOCK ? OUTPUTS : 1];
    float segment[OUTPUTS], superblock[OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        segment[o] = superblock[o] = 0.0f;
        if constexpr (INT_SUPERBLOCK) superblock_int[o] = 0;
        lane_total[o * 132 * 512] = 0.0f;
    }
    uint32 high[2][4], low[2][4];
    for (int window = 0; window < windows; ++window) {
        if (FOLD_AHEAD) fold_chunk(high[0], low[0], block, 0, quad, NO_FOLD);
#pragma unroll
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            const int set = FOLD_AHEAD ? chunk % 2 : 0;
            if (!FOLD_AHEAD) fold_chunk(high[0], low[0], block, chunk, quad, NO_FOLD);
            const unsigned long long b = token_descriptor(tokens + 2 * chunk * 16 * 128);
            wgmma_fence();
            wgmma_rows_in_registers(acc, high[set], b, 0);
            wgmma_commit();
            if (FOLD_AHEAD && chunk + 1 < CHUNKS) fold_chunk(high[1 - set], low[1 - set], block, chunk + 1, quad, NO_FOLD);
            wgmma_wait_all();
            wgmma_settled(acc);
#pragma unroll
            for (int o = 0; o < OUTPUTS; ++o) acc[o] *= 64;
            wgmma_fence();
            wgmma_rows_in_registers(acc, low[set], b, 1);
            wgmma_commit();
            wgmma_wait_all();
            wgmma_settled(acc);
#pragma unroll
            for (int pair = 0; pair < 16; pair += 2) {
                float s[4];
                load_four(s, lane_scales + chunk * TOKENS + 16 * (pair / 2));
#pragma unroll
                for (int fn = pair; fn < pair + 2; ++fn) {
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const int o = fn * 4 + c;
                        if constexpr (INT_SUPERBLOCK) {
                            superblock_int[o] += __float_as_int(s[2 * (fn - pair) + c % 2]) * acc[o];
                        } else {
                            superblock[o] = __fmaf_rn(s[2 * (fn - pair) + c % 2], __int2float_rn(acc[o]), superblock[o]);
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int o = 0; o < OUTPUTS; ++o) {
            const int row = group + 8 * ((o % 4) / 2);
            if constexpr (INT_SUPERBLOCK) {
                superblock[o] = __fmul_rn(lane_scales[(o / 8) * 16 + o % 2], __int2float_rn(superblock_int[o]));
                superblock_int[o] = 0;
            }
            segment[o] = __fmaf_rn(f16_to_f32(*(const unsigned short*)(rows + row * W_STRIDE + Q6K_D)), superblock[o], segment[o]);
            superblock[o] = 0.0f;
            if (window % 4 == 3) {
                lane_total[o * 132 * 512] = __fadd_rn(lane_total[o * 132 * 512], segment[o]);
                segment[o] = 0.0f;
            }
        }
    }
}
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_w8(float* out, int windows) { wgmma_loop<false, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_w8_fold_ahead(float* out, int windows) { wgmma_loop<true, false>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_w8_no_fold(float* out, int windows) { wgmma_loop<true, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) fold_w8_int_superblock(float* out, int windows) { chunk_loop<8, 128, false, false, 0, false, true>(out, windows); }
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_w8_int_superblock(float* out, int windows) { wgmma_loop<false, false, true>(out, windows); }
