/*
 * mmqgen's C ABI: q6_K x f32 matmuls on NVIDIA GPUs, on weights an engine already holds on the GPU as GGUF
 * blocks (borrowed in place: no copy, no read-back), on the engine's own stream.
 *
 * Link with -lmmqgen (libmmqgen.so, built by `cargo build --release -p mmqgen-capi`). At run time the library
 * needs the NVIDIA driver and NVRTC 13.0 (libnvrtc.so.13 on the loader path) to compile its kernels on first
 * use; compiled kernels are cached on disk ($MMQGEN_CACHE_DIR, else ~/.cache/mmqgen).
 *
 * Every function returns MMQGEN_OK (0) or an error code and never aborts the caller; after an error,
 * mmqgen_last_error() holds one sentence saying what was wrong (per thread). Handles are thread-safe: several
 * threads may call with the same handle, each on its own stream.
 *
 * Checked against the library's exports by the project's tests (capi/tests/abi.rs).
 */
#ifndef MMQGEN_H
#define MMQGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's signature or meaning changes. */
#define MMQGEN_ABI_VERSION 1

/* The same type as CUDA's CUstream and cudaStream_t. NULL is the legacy default stream. */
struct CUstream_st;
typedef struct CUstream_st *mmqgen_stream_t;

/* A GPU opened by mmqgen_open: its primary context (the one the CUDA runtime uses), a selection config,
 * the kernels compiled so far and each stream's workspace. */
typedef struct mmqgen_handle mmqgen_handle;

typedef enum mmqgen_status {
    MMQGEN_OK = 0,
    /* A null pointer, an impossible m, K or n, too few weight bytes, an odd weights address. */
    MMQGEN_ERR_INVALID_ARGUMENT = 1,
    /* No NVIDIA driver, no GPU, no GPU of that ordinal, or a driver older than CUDA 13.0. */
    MMQGEN_ERR_NO_GPU = 2,
    /* The GPU's architecture, or the shape, is one the selection config has no kernel for. */
    MMQGEN_ERR_UNSUPPORTED = 3,
    /* The config file could not be read or is not a valid selection config. */
    MMQGEN_ERR_CONFIG = 4,
    /* NVRTC is missing or refused a kernel, or the kernel cache failed. */
    MMQGEN_ERR_COMPILE = 5,
    /* The call needs a larger workspace while its stream is capturing a CUDA graph: call mmqgen_reserve first. */
    MMQGEN_ERR_CAPTURING = 6,
    /* A CUDA driver call failed (out of memory, a launch failure). */
    MMQGEN_ERR_CUDA = 7,
    /* An internal error was caught at the boundary (a bug in mmqgen; the sentence says where). */
    MMQGEN_ERR_INTERNAL = 8
} mmqgen_status;

/* MMQGEN_ABI_VERSION of the library that was loaded. */
uint32_t mmqgen_abi_version(void);

/* The library's version, e.g. "0.1.0" (a static string). */
const char *mmqgen_version(void);

/* The last error of the calling thread, one sentence; "" when none. Valid until this thread's next call. */
const char *mmqgen_last_error(void);

/* Opens GPU `ordinal` (a CUDA device ordinal) on its primary context, with the selection config at
 * `config_path` (a mmqgen.toml), or the embedded default when it is NULL. On success *handle is set. */
int mmqgen_open(int ordinal, const char *config_path, mmqgen_handle **handle);

/* Closes a handle (NULL is ignored). No call may be in flight on any thread, and work it queued must be done
 * or no longer needed: its workspaces are freed. */
void mmqgen_close(mmqgen_handle *handle);

/* Sizes `stream`'s workspace for every call up to max_m x max_n x max_k, so that such calls allocate nothing
 * afterwards and may be captured in a CUDA graph. May allocate and wait; not while `stream` is capturing.
 * `workspace_bytes` (may be NULL) receives the stream's workspace size. */
int mmqgen_reserve(mmqgen_handle *handle, mmqgen_stream_t stream, int64_t max_m, int64_t max_n, int64_t max_k,
                   size_t *workspace_bytes);

/* out[n][m] = x[n][K] * W^T, f32, on `stream`, asynchronously: no host synchronization, no device-to-host copy.
 *  - weights: m rows of K/256 q6_K blocks of 210 bytes (GGUF / ggml block_q6_K, no row padding), device memory of
 *    this GPU at an even address, `weight_bytes` >= m * K/256 * 210; read in place, never copied;
 *  - x: n rows of K f32 (device), out: n rows of m f32 (device), overwritten;
 *  - K a multiple of 256; m, n, K at least 1 (256 for K) and below 2^31.
 * All memory must stay valid, and the weights and x unchanged, until the queued work is done. A call allocates
 * only to grow `stream`'s workspace, which mmqgen_reserve makes unnecessary; while `stream` is capturing a graph
 * it returns MMQGEN_ERR_CAPTURING instead. On any error nothing queued writes `out`, so the caller may fall
 * back to its own kernel. */
int mmqgen_q6k_matmul(mmqgen_handle *handle, const void *weights, size_t weight_bytes, int64_t m, int64_t k,
                      const float *x, int64_t n, float *out, mmqgen_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MMQGEN_H */
