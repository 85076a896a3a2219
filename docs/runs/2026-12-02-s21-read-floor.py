#!/usr/bin/env python3
"""Session 21 device probe: the read floor of issue 12's shapes. Compiles docs/runs/2026-12-02-s21-read-floor.cu with
NVRTC to an sm_90 cubin and runs it through the driver API (ctypes), so the device needs no toolkit:
    python3 docs/runs/2026-12-02-s21-read-floor.py
Each kernel reads a weight matrix's bytes once, timed as `mmqgen bench` times a call: a spin kernel queued ahead,
CUDA events around the launch, the bytes rotated over buffers far beyond L2 so that every launch reads cold data.
Prints the median and best of REPS launches for every kernel, geometry and size."""
import ctypes
import statistics

source = open("docs/runs/2026-12-02-s21-read-floor.cu", "rb").read()
nvrtc = ctypes.CDLL("libnvrtc.so.13")


def check(result, what):
    if result != 0:
        raise SystemExit(f"{what} failed with {result}")


prog = ctypes.c_void_p()
check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"read-floor.cu", 0, None, None), "nvrtcCreateProgram")
opts = [b"--gpu-architecture=sm_90", b"-std=c++17"]
if nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)) != 0:
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    raise SystemExit(log.value.decode())
size = ctypes.c_size_t()
check(nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
cubin = ctypes.create_string_buffer(size.value)
check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")

cuda = ctypes.CDLL("libcuda.so.1")
check(cuda.cuInit(0), "cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
sms = ctypes.c_int()
check(cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, device), "multiprocessor count")
clock_khz = ctypes.c_int()
check(cuda.cuDeviceGetAttribute(ctypes.byref(clock_khz), 13, device), "clock rate")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
module = ctypes.c_void_p()
check(cuda.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")


def function(name, shared=0):
    f = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(f), module, name.encode()), name)
    if shared > 48 * 1024:
        check(cuda.cuFuncSetAttribute(f, 8, shared), "max dynamic shared memory")
    return f


def alloc(nbytes):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cuMemAlloc")
    check(cuda.cuMemsetD8_v2(p, 0x5A, ctypes.c_size_t(nbytes)), "cuMemset")
    return p.value


MAX_BYTES = 14336 * 16 * 224
BUFFERS = 16  # 16 x 51 MB = 822 MB rotated: each launch reads bytes last touched 15 launches ago, L2 is 60 MB
buffers = [alloc(MAX_BYTES) for _ in range(BUFFERS)]
out = alloc(4 * 4096)
start, stop = ctypes.c_void_p(), ctypes.c_void_p()
check(cuda.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
check(cuda.cuEventCreate(ctypes.byref(stop), 0), "cuEventCreate")
spin = function("spin")
spin_cycles = ctypes.c_longlong(int(60e-6 * clock_khz.value * 1e3 * 1.1))
spin_args = (ctypes.c_void_p * 1)(ctypes.addressof(spin_cycles))
REPS = 30


def time_launch(f, grid, threads, shared, make_args):
    samples = []
    for rep in range(REPS + 2):
        held = make_args(buffers[rep % BUFFERS])
        args = (ctypes.c_void_p * len(held))(*[ctypes.addressof(a) for a in held])
        check(cuda.cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, None, spin_args, None), "spin")
        check(cuda.cuEventRecord(start, None), "cuEventRecord")
        check(cuda.cuLaunchKernel(f, grid, 1, 1, threads, 1, 1, shared, None, args, None), "cuLaunchKernel")
        check(cuda.cuEventRecord(stop, None), "cuEventRecord")
        check(cuda.cuEventSynchronize(stop), "cuEventSynchronize")
        ms = ctypes.c_float()
        check(cuda.cuEventElapsedTime(ctypes.byref(ms), start, stop), "cuEventElapsedTime")
        if rep >= 2:
            samples.append(ms.value * 1e3)
    return statistics.median(samples), min(samples)


import sys
if len(sys.argv) > 1 and sys.argv[1] == "rows":
    # Session 21, lease 5: the fragment ring's copy pattern (bulk_rows) at 14336 x 4096 padded, rows against runs.
    print(f"{sms.value} SMs, {REPS} timed launches each, median / best µs; 14336 rows x 3584 bytes (51.38 MB)")
    rows_total, row_bytes = 14336, 16 * 224
    results = []
    for warps in (8, 7):
        for per_stage, stages in ((2, 3), (2, 2), (4, 2), (1, 6)):
            shared = warps * stages * 16 * 224 * per_stage
            if shared > 227 * 1024:
                continue
            f = function("bulk_rows", shared)
            grid = (rows_total + 16 * warps - 1) // (16 * warps)
            for pieces in (1, 0):
                med, best = time_launch(f, grid, 32 * warps, shared,
                                        lambda b: [ctypes.c_uint64(b), ctypes.c_uint32(rows_total),
                                                   ctypes.c_uint32(row_bytes), ctypes.c_uint32(per_stage),
                                                   ctypes.c_uint32(stages), ctypes.c_uint32(pieces),
                                                   ctypes.c_uint64(out)])
                results.append((med, best, f"{grid} blocks of {warps} warps x 16 rows, {per_stage} super-blocks a "
                                           f"stage, {stages} stages, {'16 row copies' if pieces else 'one run copy'} a stage"))
    for med, best, what in sorted(results):
        print(f"  {med:7.2f} / {best:7.2f}  {51.38e6 / med / 1e6:5.2f} TB/s  {what}")
    raise SystemExit(0)

SIZES = [("4096x4096 raw", 4096 * 16 * 210), ("4096x4096 padded", 4096 * 16 * 224),
         ("14336x4096 raw", 14336 * 16 * 210), ("14336x4096 padded", 14336 * 16 * 224)]
print(f"{sms.value} SMs, clock {clock_khz.value / 1e6:.2f} GHz, {REPS} timed launches each, median / best µs")
med, best = time_launch(function("empty_call"), 1, 32, 0, lambda b: [ctypes.c_uint64(out)])
print(f"empty_call 1x32: {med:.2f} / {best:.2f}")
for label, nbytes in SIZES:
    print(f"== {label}: {nbytes / 1e6:.2f} MB (at 4.2 TB/s: {nbytes / 4.2e6:.2f} µs)")
    rows = []
    for name in ("grid_stride_u4", "grid_stride_u8", "block_run_u4", "block_run_u8"):
        f = function(name)
        for blocks_per_sm, threads in ((1, 1024), (2, 512), (4, 256), (8, 256), (16, 128)):
            grid = sms.value * blocks_per_sm
            med, best = time_launch(f, grid, threads, 0,
                                    lambda b: [ctypes.c_uint64(b), ctypes.c_uint64(nbytes // 16), ctypes.c_uint64(out)])
            rows.append((med, f"{name} {grid}x{threads}", best))
    f_ring = None
    for grid in (128, sms.value):
        for warps, chunk, stages in ((1, 16384, 8), (1, 32768, 6), (1, 8192, 8), (8, 7168, 2), (8, 7168, 3),
                                     (8, 3584, 4), (4, 14336, 3), (16, 3584, 3)):
            shared = warps * chunk * stages
            if shared > 227 * 1024:
                continue
            f_ring = function("bulk_ring", shared)
            med, best = time_launch(f_ring, grid, 32 * warps, shared,
                                    lambda b: [ctypes.c_uint64(b), ctypes.c_uint64(nbytes), ctypes.c_uint32(chunk),
                                               ctypes.c_uint32(stages), ctypes.c_uint64(out)])
            rows.append((med, f"bulk_ring {grid} blocks, {warps} warps x {stages} stages x {chunk} B "
                              f"({shared // 1024} KiB in flight)", best))
    for med, what, best in sorted(rows):
        print(f"  {med:7.2f} / {best:7.2f}  {nbytes / med / 1e6:5.2f} TB/s  {what}")
