/*
 * What routing a q6_K matrix through mmqgen costs in device memory, by cuMemGetInfo, as an engine would see it:
 * a 14336 x 4096 q6_K matrix allocated as ggml holds it (GGUF blocks, 210 bytes each), then mmqgen's handle, a
 * reserve for the largest call, and calls at n = 1, 8, 512 and 2048 on those borrowed blocks. The weights' bytes
 * are whatever the allocation holds (this measures memory, not numbers).
 *
 * Build (on a machine with the CUDA driver): cc -O2 -I ../../capi/include mem_check.c -L LIBDIR -lmmqgen -lcuda
 */
#include "mmqgen.h"

#include <stdio.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
CUresult cuInit(unsigned int flags);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, int dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes);
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
CUresult cuMemsetD8_v2(CUdeviceptr ptr, unsigned char value, size_t count);
CUresult cuCtxSynchronize(void);

static size_t free_now(void) {
    size_t free_bytes = 0, total = 0;
    cuCtxSynchronize();
    cuMemGetInfo_v2(&free_bytes, &total);
    return free_bytes;
}

int main(void) {
    const long long m = 14336, k = 4096, max_n = 2048;
    const size_t gguf = (size_t)m * (size_t)(k / 256) * 210;
    CUcontext ctx;
    CUdeviceptr weights, x, out;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc_v2(&weights, gguf) ||
        cuMemAlloc_v2(&x, (size_t)max_n * k * 4) || cuMemAlloc_v2(&out, (size_t)max_n * m * 4)) {
        printf("no GPU or not enough memory\n");
        return 1;
    }
    /* Blocks of zeros: d = 0 everywhere, a valid q6_K matrix. */
    cuMemsetD8_v2(weights, 0, gguf);
    cuMemsetD8_v2(x, 0, (size_t)max_n * k * 4);
    size_t before = free_now();
    mmqgen_handle *handle = NULL;
    if (mmqgen_open(0, NULL, &handle) != MMQGEN_OK) {
        printf("mmqgen_open: %s\n", mmqgen_last_error());
        return 1;
    }
    size_t opened = free_now();
    size_t workspace = 0;
    if (mmqgen_reserve(handle, NULL, m, max_n, k, &workspace) != MMQGEN_OK) {
        printf("mmqgen_reserve: %s\n", mmqgen_last_error());
        return 1;
    }
    size_t reserved = free_now();
    const long long ns[] = {1, 8, 512, 2048};
    size_t rounds[2];
    /* Round 1 compiles and loads each kernel on first use; round 2 is what every later call costs. */
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 4; ++i) {
            if (mmqgen_q6k_matmul(handle, (const void *)weights, gguf, m, k, (const float *)x, ns[i], (float *)out,
                                  NULL) != MMQGEN_OK) {
                printf("mmqgen_q6k_matmul n = %lld: %s\n", ns[i], mmqgen_last_error());
                return 1;
            }
        }
        rounds[round] = free_now();
    }
    const double mib = 1048576.0;
    printf("cuMemGetInfo free (MiB): before %.1f | after mmqgen_open %.1f | after reserve %.1f | after first calls "
           "%.1f | after second calls %.1f\n",
           before / mib, opened / mib, reserved / mib, rounds[0] / mib, rounds[1] / mib);
    printf("q6_K 14336 x 4096 borrowed in place (GGUF %.2f MiB): weights' extra device memory %.4fx GGUF after the "
           "kernels are loaded; workspace for n <= 2048: %.2f MiB; kernels loaded on first use: %.2f MiB\n",
           gguf / mib, ((double)rounds[0] - (double)rounds[1]) / (double)gguf, workspace / mib,
           ((double)reserved - (double)rounds[0]) / mib);
    mmqgen_close(handle);
    return 0;
}
