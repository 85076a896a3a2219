// Device probe (session 5), built on the H200 with: nvcc -gencode arch=compute_90a,code=sm_90a -O2 f16exact.cu
// Not part of the build: a record of the measurement NUMERICS.md 3 cites for engine wgmma_f16_regfold.
// Is Hopper's f16 tensor-core f32 accumulation exact for integer sums below 2^24? wgmma m64n8k16 (A in registers)
// and mma.sync m16n8k16, four k16 steps chained in one accumulator: lo plane k0-15, k16-31, then hi plane.
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
__device__ uint32_t hash(uint32_t x) { x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x; }
struct Case { int a[64][64]; int b[64][8]; };  // a[row][k64: lo 0..31 then hi 0..31], b[k32][token]
__device__ __forceinline__ uint32_t pack(float a, float b) { __half2 h = __floats2half2_rn(a, b); return *(uint32_t*)&h; }
__global__ void test(unsigned long long* bad, unsigned long long* checked, int trials, int mode, int use_wgmma, int* maxabs) {
  __shared__ __align__(128) __half B[2][8][8];   // per k16 step of the 32: 2 core matrices (k 0-7, 8-15) of 8 tokens x 8 halves
  __shared__ int Alo[64][32], Ahi[64][32], X[32][8];
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  for (int trial = blockIdx.x; trial < trials; trial += gridDim.x) {
    __syncthreads();
    for (int i = tid; i < 64 * 32; i += blockDim.x) {
      int row = i / 32, k = i % 32;
      uint32_t r = hash(trial * 9176u + i * 31u + mode * 7777777u);
      int sc, w;
      if (mode == 0) { sc = (int)(r & 255) - 128; w = (int)((r >> 8) & 63) - 32; }
      else if (mode == 1) { sc = ((r >> 3) & 7) ? -128 : (int)(r & 255) - 128; w = ((r >> 6) & 7) ? -32 : (int)((r >> 8) & 63) - 32; }
      else { sc = (r & 1) ? -128 : 127; w = (r & 2) ? -32 : 31; if (((r >> 4) & 15) == 0) { sc = (int)((r >> 8) & 255) - 128; w = (int)((r >> 16) & 63) - 32; } }
      Alo[row][k] = (sc & 15) * w; Ahi[row][k] = 16 * (sc >> 4) * w;
    }
    for (int i = tid; i < 32 * 8; i += blockDim.x) {
      uint32_t r = hash(trial * 1234567u + i * 77u + mode * 999u + 5u);
      int x;
      if (mode == 0) x = (int)(r % 255) - 127; else if (mode == 1) x = ((r >> 3) & 7) ? 127 : (int)(r % 255) - 127; else x = ((r >> 9) & 1) ? 127 : -127;
      if (mode == 2 && ((r >> 12) & 7) == 0) x = (int)((r >> 16) % 255) - 127;
      X[i / 8][i % 8] = x;
    }
    __syncthreads();
    float d[4] = {0, 0, 0, 0};
    for (int step = 0; step < 4; ++step) {  // lo k0-15, lo k16-31, hi k0-15, hi k16-31
      int (*A)[32] = step < 2 ? Alo : Ahi; int k0 = (step % 2) * 16;
      __syncthreads();
      for (int i = tid; i < 8 * 16; i += blockDim.x) { int tok = i / 16, k = i % 16; B[k / 8][tok][k % 8] = __int2half_rn(X[k0 + k][tok]); }
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
      int r0 = 16 * warp + g;
      uint32_t a0 = pack(A[r0][k0 + 2 * t], A[r0][k0 + 2 * t + 1]);
      uint32_t a1 = pack(A[r0 + 8][k0 + 2 * t], A[r0 + 8][k0 + 2 * t + 1]);
      uint32_t a2 = pack(A[r0][k0 + 2 * t + 8], A[r0][k0 + 2 * t + 9]);
      uint32_t a3 = pack(A[r0 + 8][k0 + 2 * t + 8], A[r0 + 8][k0 + 2 * t + 9]);
      if (use_wgmma) {
        uint32_t addr = (uint32_t)__cvta_generic_to_shared(&B[0][0][0]);
        unsigned long long desc = ((addr & 0x3FFFF) >> 4) | ((unsigned long long)(128 >> 4) << 16) | ((unsigned long long)(256 >> 4) << 32);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"((int)(step > 0)));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      } else {
        // B fragment for mma.sync m16n8k16: b0 = (k 2t,2t+1; token g), b1 = (k 2t+8, 2t+9; token g)
        uint32_t b0 = pack(X[k0 + 2 * t][g], X[k0 + 2 * t + 1][g]);
        uint32_t b1 = pack(X[k0 + 2 * t + 8][g], X[k0 + 2 * t + 9][g]);
        if (step == 0) { d[0] = d[1] = d[2] = d[3] = 0; }
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    for (int c = 0; c < 4; ++c) {
      int row = 16 * warp + g + 8 * (c / 2), tok = 2 * t + (c % 2);
      long long exact = 0, bound = 0;
      for (int k = 0; k < 32; ++k) { long long v = Alo[row][k] + Ahi[row][k]; exact += v * X[k][tok];
        long long m1 = llabs((long long)Alo[row][k] * X[k][tok]), m2 = llabs(v * X[k][tok]); bound += m1 > m2 ? m1 : m2; }
      atomicMax(maxabs, (int)llabs(exact));
      atomicAdd(checked, 1ull);
      if (bound < (1ll << 24) && d[c] != (float)exact) atomicAdd(bad, 1ull);
    }
  }
}
int main() {
  unsigned long long *bad, *checked; int* maxabs;
  cudaMallocManaged(&bad, 8); cudaMallocManaged(&checked, 8); cudaMallocManaged(&maxabs, 4);
  for (int wg = 1; wg >= 0; --wg) for (int mode = 0; mode < 3; ++mode) {
    *bad = 0; *checked = 0; *maxabs = 0;
    test<<<264, 128>>>(bad, checked, 200000, mode, wg, maxabs);
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s mode %d: %s, %llu outputs checked, %llu inexact, max |I32| %d (2^24 = 16777216)\n", wg ? "wgmma m64n8k16 f16->f32" : "mma.sync m16n8k16 f16->f32", mode, cudaGetErrorString(e), *checked, *bad, *maxabs);
  }
  return 0;
}
