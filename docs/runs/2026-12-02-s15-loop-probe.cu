// Device probe (session 15): the chunk loop of the 128 x 128 prefill tile alone, on data that stays in shared
// memory (no copies, no waits), as the int8 register fold runs it today (`tma_128x128`: fold, two m16n8k32 IMMA,
// 64 H + L, conversion, fma) and as an f16 form on mma.sync would (fold to two f16 planes as `wgmma_f16_regfold`
// does, four m16n8k16 HMMA into an f32 accumulator that holds f(I32) exactly, one fma), for docs/PERF.md's next
// prefill lever. Not part of the build; the values are arbitrary bytes (the instruction stream, not the result, is
// what is timed); run by docs/runs/2026-12-02-s15-mma-rate.py with this file as its argument. One block of 8 warps
// an SM, each warp 16 rows x 128 tokens, WINDOWS windows of 8 chunks.
typedef unsigned char uint8;
typedef signed char int8;
typedef unsigned int uint32;
struct __align__(8) uint32x2 { uint32 x, y; };
struct __align__(16) uint32x4 { uint32 x, y, z, w; };
constexpr int Q6K_QL = 0, Q6K_QH = 128, Q6K_SCALES = 192, Q6K_D = 208;
constexpr int THREADS = 256, ROWS = 128, TOKENS = 128, CHUNKS = 8, FRAGMENTS_N = 16, OUTPUTS = 64;

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
__device__ void fill(uint8* shared, int bytes) {
    for (int i = threadIdx.x; i < bytes / 4; i += THREADS) {
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
// The window end: the super-block's sums into the segment, the segment into the total every fourth window.
__device__ __forceinline__ void window_end(float (&superblock)[OUTPUTS], float (&segment)[OUTPUTS], float (&total)[OUTPUTS],
                                           const uint8* rows, int stride, int window, int group) {
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) {
        const int row = group + 8 * ((o % 4) / 2);
        segment[o] = __fmaf_rn(f16_to_f32(*(const unsigned short*)(rows + row * stride + Q6K_D)), superblock[o], segment[o]);
        superblock[o] = 0.0f;
        if (window % 4 == 3) {
            total[o] = __fadd_rn(total[o], segment[o]);
            segment[o] = 0.0f;
        }
    }
}

// ---- int8: today's loop -----------------------------------------------------------------------------------
constexpr int I8_W_STRIDE = 240, I8_T_STRIDE = 272;
constexpr int I8_TOKENS_OFFSET = ROWS * I8_W_STRIDE, I8_SCALES_OFFSET = I8_TOKENS_OFFSET + TOKENS * I8_T_STRIDE;
constexpr int I8_BYTES = I8_SCALES_OFFSET + CHUNKS * TOKENS * 4;
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
__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32 (&a)[4], const uint32 (&b)[2]) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(0));
}
__device__ __forceinline__ int pair_token(int fragment, int row) {
    const int quad = row / 2;
    return 4 * quad + 2 * (fragment ^ (quad / 2)) + row % 2;
}
extern "C" __global__ void __launch_bounds__(THREADS) loop_int8(float* out, int windows) {
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, I8_BYTES);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const uint8* rows = shared + warp * 16 * I8_W_STRIDE;
    const uint8* block = rows + group * I8_W_STRIDE;
    const uint8* lane_tokens = shared + I8_TOKENS_OFFSET + pair_token(lane / 16, lane % 8) * I8_T_STRIDE + ((lane / 8) % 2) * 16;
    const float* lane_scales = (const float*)(shared + I8_SCALES_OFFSET) + 4 * quad;
    float total[OUTPUTS], segment[OUTPUTS], superblock[OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) total[o] = segment[o] = superblock[o] = 0.0f;
    for (int window = 0; window < windows; ++window) {
#pragma unroll 1
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            uint32 high[4], low[4], tokens[FRAGMENTS_N][2];
            const int quarter = chunk % 4;
            const uint8* low_bits = block + Q6K_QL + 64 * (chunk / 4) + 32 * (chunk % 2) + 4 * quad;
            const uint8* high_bits = block + Q6K_QH + 32 * (chunk / 4) + 4 * quad;
            const uint8* scales = block + Q6K_SCALES + 2 * chunk;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int row_offset = (i % 2) * 8 * I8_W_STRIDE, k_offset = (i / 2) * 16;
                fold_word(q6_bytes_times_4(*(const uint32*)(low_bits + row_offset + k_offset), *(const uint32*)(high_bits + row_offset + k_offset), quarter),
                          (int)*(const int8*)(scales + row_offset + i / 2), high[i], low[i]);
            }
#pragma unroll
            for (int fn = 0; fn < FRAGMENTS_N; fn += 2) {
                ldmatrix_x4(tokens[fn][0], tokens[fn][1], tokens[fn + 1][0], tokens[fn + 1][1], lane_tokens + 8 * fn * I8_T_STRIDE + chunk * 32);
            }
#pragma unroll
            for (int pair = 0; pair < FRAGMENTS_N; pair += 2) {
                float s[4];
                load_four(s, lane_scales + chunk * TOKENS + 16 * (pair / 2));
#pragma unroll
                for (int fn = pair; fn < pair + 2; ++fn) {
                    int h[4], l[4];
                    mma_s8(h, high, tokens[fn]);
                    mma_s8(l, low, tokens[fn]);
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const int o = fn * 4 + c;
                        superblock[o] = __fmaf_rn(s[2 * (fn - pair) + c % 2], __int2float_rn(64 * h[c] + l[c]), superblock[o]);
                    }
                }
            }
        }
        window_end(superblock, segment, total, rows, I8_W_STRIDE, window, group);
    }
    float sum = 0.0f;
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) sum += total[o];
    out[blockIdx.x * THREADS + threadIdx.x] = sum;
}

// ---- f16 on mma.sync: the proposed loop ---------------------------------------------------------------------
constexpr int F16_W_STRIDE = 224, F16_T_STRIDE = 528;  // a token's 256 f16 of a window, and 16 bytes over
constexpr int F16_TOKENS_OFFSET = ROWS * F16_W_STRIDE, F16_SCALES_OFFSET = F16_TOKENS_OFFSET + TOKENS * F16_T_STRIDE;
constexpr int F16_BYTES = F16_SCALES_OFFSET + CHUNKS * TOKENS * 4;
__device__ __forceinline__ uint32 add_f16x2(uint32 a, uint32 b) {
    uint32 r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32 mul_f16x2(uint32 a, uint32 b) {
    uint32 r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ uint32 bytes_as_f16x2(uint32 word, uint32 selector, uint32 bias) {
    return add_f16x2(byte_perm(word, 0x64646464u, selector), bias);
}
__device__ __forceinline__ uint32 q6_bytes(uint32 ql, uint32 qh, int quarter) {
    return ((quarter < 2 ? ql : ql >> 4) & 0x0F0F0F0Fu) | (((qh >> (2 * quarter)) << 4) & 0x30303030u);
}
// wgmma_f16_regfold's fold_fragment_f16: both planes' A fragments for the chunk's two k16 steps.
__device__ __forceinline__ void fold_f16(uint32 (&high)[2][4], uint32 (&low)[2][4], const uint8* block, int chunk, int quad) {
    const int quarter = chunk % 4;
    const uint8* low_bits = block + Q6K_QL + 64 * (chunk / 4) + 32 * (chunk % 2) + 8 * quad;
    const uint8* high_bits = block + Q6K_QH + 32 * (chunk / 4) + 8 * quad;
    const uint8* scale = block + Q6K_SCALES + 2 * chunk + quad / 2;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row_offset = half * 8 * F16_W_STRIDE;
        const uint32 sc = scale[row_offset];
        const uint32 high_scale = bytes_as_f16x2((sc & 0xF0u) ^ 0x80u, 0x4040u, 0xE480E480u);
        const uint32 low_scale = bytes_as_f16x2(sc & 0x0Fu, 0x4040u, 0xE400E400u);
        const uint32x2 ql = *(const uint32x2*)(low_bits + row_offset);
        const uint32x2 qh = *(const uint32x2*)(high_bits + row_offset);
#pragma unroll
        for (int step = 0; step < 2; ++step) {
            const uint32 q6 = q6_bytes(step == 0 ? ql.x : ql.y, step == 0 ? qh.x : qh.y, quarter);
            const uint32 first = bytes_as_f16x2(q6, 0x4140u, 0xE420E420u);
            const uint32 second = bytes_as_f16x2(q6, 0x4342u, 0xE420E420u);
            high[step][half] = mul_f16x2(first, high_scale);
            high[step][2 + half] = mul_f16x2(second, high_scale);
            low[step][half] = mul_f16x2(first, low_scale);
            low[step][2 + half] = mul_f16x2(second, low_scale);
        }
    }
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32 (&a)[4], uint32 b0, uint32 b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// CHAINS 1: each output's four HMMA are one dependent chain (the form of log 23). CHAINS 2: the low plane's two and the
// high plane's two are separate chains, added by one FADD (exact: both are integers below 2^24, and so is their sum).
template <int CHAINS>
__device__ __forceinline__ void loop_f16_body(float* out, int windows) {
    extern __shared__ __align__(128) uint8 shared[];
    fill(shared, F16_BYTES);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    const uint8* rows = shared + warp * 16 * F16_W_STRIDE;
    const uint8* block = rows + group * F16_W_STRIDE;
    // ldmatrix.x4 over 16 tokens x one k16 step (32 bytes): matrices (tokens 0-7, bytes 0-15), (0-7, 16-31),
    // (8-15, 0-15), (8-15, 16-31), i.e. fragment 2p's b0, b1, then fragment 2p + 1's.
    const uint8* lane_tokens = shared + F16_TOKENS_OFFSET + ((lane % 8) + 8 * (lane / 16)) * F16_T_STRIDE + ((lane / 8) % 2) * 16;
    const float* lane_scales = (const float*)(shared + F16_SCALES_OFFSET) + 4 * quad;
    float total[OUTPUTS], segment[OUTPUTS], superblock[OUTPUTS];
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) total[o] = segment[o] = superblock[o] = 0.0f;
    for (int window = 0; window < windows; ++window) {
#pragma unroll 1
        for (int chunk = 0; chunk < CHUNKS; ++chunk) {
            uint32 high[2][4], low[2][4];
            fold_f16(high, low, block, chunk, quad);
#pragma unroll
            for (int pair = 0; pair < FRAGMENTS_N; pair += 2) {
                uint32 b[2][4];  // [step][fragment 2p b0, b1, fragment 2p + 1 b0, b1]
#pragma unroll
                for (int step = 0; step < 2; ++step) {
                    ldmatrix_x4(b[step][0], b[step][1], b[step][2], b[step][3], lane_tokens + 16 * (pair / 2) * F16_T_STRIDE + chunk * 64 + step * 32);
                }
                float s[4];
                load_four(s, lane_scales + chunk * TOKENS + 16 * (pair / 2));
#pragma unroll
                for (int f = 0; f < 2; ++f) {
                    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    if constexpr (CHAINS == 1) {
                        mma_f16(acc, low[0], b[0][2 * f], b[0][2 * f + 1]);
                        mma_f16(acc, low[1], b[1][2 * f], b[1][2 * f + 1]);
                        mma_f16(acc, high[0], b[0][2 * f], b[0][2 * f + 1]);
                        mma_f16(acc, high[1], b[1][2 * f], b[1][2 * f + 1]);
                    } else {
                        float other[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                        mma_f16(acc, low[0], b[0][2 * f], b[0][2 * f + 1]);
                        mma_f16(other, high[0], b[0][2 * f], b[0][2 * f + 1]);
                        mma_f16(acc, low[1], b[1][2 * f], b[1][2 * f + 1]);
                        mma_f16(other, high[1], b[1][2 * f], b[1][2 * f + 1]);
#pragma unroll
                        for (int c = 0; c < 4; ++c) acc[c] = __fadd_rn(acc[c], other[c]);
                    }
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const int o = (pair + f) * 4 + c;
                        superblock[o] = __fmaf_rn(s[2 * f + c % 2], acc[c], superblock[o]);
                    }
                }
            }
        }
        window_end(superblock, segment, total, rows, F16_W_STRIDE, window, group);
    }
    float sum = 0.0f;
#pragma unroll
    for (int o = 0; o < OUTPUTS; ++o) sum += total[o];
    out[blockIdx.x * THREADS + threadIdx.x] = sum;
}
extern "C" __global__ void __launch_bounds__(THREADS) loop_f16(float* out, int windows) { loop_f16_body<1>(out, windows); }
extern "C" __global__ void __launch_bounds__(THREADS) loop_f16_two_chains(float* out, int windows) {
    loop_f16_body<2>(out, windows);
}
