// Device probe (session 21): how fast can any kernel on this H200 read a decode shape's weight bytes once, timed the
// way `mmqgen bench` times a call (a spin kernel queued ahead, CUDA events around the launch, cold data)? Issue 12's
// targets (16 µs for 14336 x n x 4096, 6 µs for 4096 x n x 4096, whole call) are judged against this floor. Not part
// of the build; run by docs/runs/2026-12-02-s21-read-floor.py. Every kernel folds what it read into one word that it
// writes only when it equals an unlikely value, so that no load is dead code.
typedef unsigned int uint32;
typedef unsigned long long uint64;
struct __align__(16) uint32x4 { uint32 x, y, z, w; };

__device__ __forceinline__ uint32x4 load_streaming(const uint32x4* p) {
    uint32x4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ void keep(uint32 acc, uint32* out) {
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;
}

// The launch and timing floor: one warp that does nothing.
extern "C" __global__ void empty_call(uint32* out) { keep(threadIdx.x, out); }

// Each thread reads UNROLL 16-byte words at once, the grid striding over all of it.
template <int UNROLL>
__device__ void grid_stride(const uint32x4* p, uint64 words, uint32* out) {
    uint64 stride = (uint64)gridDim.x * blockDim.x;
    uint32 acc = 0;
    for (uint64 base = (uint64)blockIdx.x * blockDim.x + threadIdx.x; base < words; base += stride * UNROLL) {
        uint32x4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            uint64 i = base + u * stride;
            v[u] = i < words ? load_streaming(p + i) : uint32x4{0, 0, 0, 0};
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    keep(acc, out);
}
extern "C" __global__ void grid_stride_u4(const uint32x4* p, uint64 words, uint32* out) { grid_stride<4>(p, words, out); }
extern "C" __global__ void grid_stride_u8(const uint32x4* p, uint64 words, uint32* out) { grid_stride<8>(p, words, out); }

// Each block reads one contiguous run (as a decode block reads its rows), its threads UNROLL words apart.
template <int UNROLL>
__device__ void block_run(const uint32x4* p, uint64 words, uint32* out) {
    uint64 per_block = (words + gridDim.x - 1) / gridDim.x;
    uint64 begin = per_block * blockIdx.x, end = begin + per_block < words ? begin + per_block : words;
    uint32 acc = 0;
    for (uint64 base = begin + threadIdx.x; base < end; base += (uint64)blockDim.x * UNROLL) {
        uint32x4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            uint64 i = base + (uint64)u * blockDim.x;
            v[u] = i < end ? load_streaming(p + i) : uint32x4{0, 0, 0, 0};
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    keep(acc, out);
}
extern "C" __global__ void block_run_u4(const uint32x4* p, uint64 words, uint32* out) { block_run<4>(p, words, out); }
extern "C" __global__ void block_run_u8(const uint32x4* p, uint64 words, uint32* out) { block_run<8>(p, words, out); }

// Bulk copies into a shared-memory ring, as the ring engines stream: each warp's lane 0 keeps `stages` copies of
// `chunk` bytes in flight on mbarriers of its own and re-issues a slot as soon as it lands (no work between). The
// block's contiguous run is dealt to its warps chunk by chunk.
__device__ __forceinline__ uint32 smem_address(const void* p) { return (uint32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bulk_copy(uint32 dst, const char* src, uint32 bytes, uint32 bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void wait_parity(uint32 bar, uint32 parity) {
    asm volatile(
        "{ .reg .pred done;\n"
        "wait: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait; }" ::"r"(bar), "r"(parity) : "memory");
}
extern "C" __global__ void bulk_ring(const char* p, uint64 bytes, uint32 chunk, uint32 stages, uint32* out) {
    extern __shared__ __align__(128) char ring[];
    __shared__ __align__(8) uint64 bars[32 * 8];
    const uint32 warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    uint64 per_block = (bytes + gridDim.x - 1) / gridDim.x;
    per_block = (per_block + 15) / 16 * 16;
    uint64 begin = per_block * blockIdx.x, end = begin + per_block < bytes ? begin + per_block : bytes;
    uint32 acc = 0;
    if (lane == 0) {
        for (uint32 s = 0; s < stages; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bars[warp * 8 + s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        char* my_ring = ring + (uint64)warp * stages * chunk;
        // Chunk j of the block's run goes to warp j % warps; the warp's i-th chunk to its slot i % stages.
        uint64 first = begin + (uint64)warp * chunk, step = (uint64)warps * chunk;
        uint64 issue = first;
        for (uint32 s = 0; s < stages && issue < end; ++s, issue += step) {
            uint32 n = end - issue < chunk ? (uint32)(end - issue) : chunk;
            bulk_copy(smem_address(my_ring + s * chunk), p + issue, n, smem_address(&bars[warp * 8 + s]));
        }
        uint32 slot = 0, phase = 0;
        for (uint64 at = first; at < end; at += step) {
            wait_parity(smem_address(&bars[warp * 8 + slot]), phase);
            acc ^= *(volatile uint32*)(my_ring + slot * chunk);
            if (issue < end) {
                uint32 n = end - issue < chunk ? (uint32)(end - issue) : chunk;
                bulk_copy(smem_address(my_ring + slot * chunk), p + issue, n, smem_address(&bars[warp * 8 + slot]));
                issue += step;
            }
            if (++slot == stages) slot = 0, phase ^= 1;
        }
    }
    keep(acc, out);
}
// The fragment ring's copy pattern (ring_mma_128x8, decode log 43) without its tensor maps or its mma work: each warp
// owns 16 rows of the block and streams them `per_stage` super-blocks at a time, `stages` deep, on mbarriers of its
// own. `row_pieces` = 1: a stage is 16 separate copies (a row's 224 x per_stage bytes each, rows `row_bytes` apart);
// 0: the warp's 16 rows are treated as one contiguous run and a stage is one copy of the same bytes.
extern "C" __global__ void bulk_rows(const char* p, uint32 rows, uint32 row_bytes, uint32 per_stage, uint32 stages,
                                     uint32 row_pieces, uint32* out) {
    extern __shared__ __align__(128) char ring[];
    __shared__ __align__(8) uint64 bars[32 * 8];
    const uint32 warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32 row0 = (blockIdx.x * warps + warp) * 16;
    uint32 acc = 0;
    if (lane == 0 && row0 < rows) {
        const uint32 piece = 224 * per_stage, stage_bytes = 16 * piece, passes = row_bytes / piece;
        for (uint32 s = 0; s < stages; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bars[warp * 8 + s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        char* my_ring = ring + (uint64)warp * stages * stage_bytes;
        const char* base = p + (uint64)row0 * row_bytes;
        auto issue = [&](uint32 pass, uint32 slot) {
            const uint32 bar = smem_address(&bars[warp * 8 + slot]);
            char* dst = my_ring + slot * stage_bytes;
            if (row_pieces) {
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage_bytes) : "memory");
                for (uint32 r = 0; r < 16; ++r)
                    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                                 ::"r"(smem_address(dst + r * piece)), "l"(base + (uint64)r * row_bytes + pass * piece),
                                 "r"(piece), "r"(bar) : "memory");
            } else {
                bulk_copy(smem_address(dst), base + (uint64)pass * stage_bytes, stage_bytes, bar);
            }
        };
        for (uint32 s = 0; s < stages && s < passes; ++s) issue(s, s);
        uint32 slot = 0, phase = 0;
        for (uint32 pass = 0; pass < passes; ++pass) {
            wait_parity(smem_address(&bars[warp * 8 + slot]), phase);
            acc ^= *(volatile uint32*)(my_ring + slot * stage_bytes);
            if (pass + stages < passes) issue(pass + stages, slot);
            if (++slot == stages) slot = 0, phase ^= 1;
        }
    }
    keep(acc, out);
}
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
