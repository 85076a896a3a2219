#!/usr/bin/env python3
"""Session 22 device probe: the chunk loops of docs/runs/2026-12-02-s22-loop-probe.cu, compiled by NVRTC to an sm_90
cubin and run through the driver API (ctypes), so that the device needs no CUDA toolkit. One block an SM.
    python3 docs/runs/2026-12-02-s22-loop-probe.py [--cubin FILE]
With --cubin it only compiles and writes the cubin (for cuobjdump --dump-resource-usage here).
Session 23: --source FILE compiles another probe (which may include this one's, from docs/runs), and
--kernel NAME:WARPS:ROWS:SHARED_BYTES (repeatable) times kernels this list does not name."""
import ctypes
import sys

SOURCE = "docs/runs/2026-12-02-s22-loop-probe.cu"
# name, warps, rows of the block (every block covers 128 tokens)
KERNELS = (("fold_w8", 8, 128), ("k16_w8", 8, 128), ("fold_w8_global", 8, 128), ("k16_w8_global", 8, 128),
           ("fold_w12", 12, 192), ("k16_w12", 12, 192), ("fold_w16_n64", 16, 128), ("k16_w16_n64", 16, 128),
           ("fold_w8_no_i2f", 8, 128), ("fold_w8_no_imma", 8, 128), ("fold_w8_no_fold", 8, 128),
           ("float_planes_w8", 8, 128), ("float_planes_w8_no_fold", 8, 128), ("float_planes_w12", 12, 192),
           ("fold_w8_c_register", 8, 128), ("float_planes_w8_rz", 8, 128),
           ("wgmma_w8", 8, 128), ("wgmma_w8_fold_ahead", 8, 128), ("wgmma_w8_no_fold", 8, 128),
           ("fold_w8_int_superblock", 8, 128), ("wgmma_w8_int_superblock", 8, 128))
if "--kernel" in sys.argv:
    KERNELS = tuple(tuple(int(f) if i else f for i, f in enumerate(sys.argv[j + 1].split(":")))
                    for j, a in enumerate(sys.argv) if a == "--kernel")
if "--source" in sys.argv:
    SOURCE = sys.argv[sys.argv.index("--source") + 1]
if "--only" in sys.argv:
    KERNELS = tuple(k for k in KERNELS if k[0] in sys.argv[sys.argv.index("--only") + 1].split(","))
WINDOWS = 64


def check(result, what):
    if result != 0:
        raise SystemExit(f"{what} failed with {result}")


nvrtc = ctypes.CDLL("libnvrtc.so.13")
prog = ctypes.c_void_p()
check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), open(SOURCE, "rb").read(), b"probe.cu", 0, None, None), "nvrtcCreateProgram")
opts = [b"--gpu-architecture=sm_90a", b"-std=c++17", b"--fmad=false", b"--include-path=docs/runs"]
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
if "--cubin" in sys.argv:
    open(sys.argv[sys.argv.index("--cubin") + 1], "wb").write(cubin.raw)
    raise SystemExit(0)

cuda = ctypes.CDLL("libcuda.so.1")
check(cuda.cuInit(0), "cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
sms, clock_khz = ctypes.c_int(), ctypes.c_int()
check(cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, device), "multiprocessor count")
check(cuda.cuDeviceGetAttribute(ctypes.byref(clock_khz), 13, device), "clock rate")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
module = ctypes.c_void_p()
check(cuda.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
out = ctypes.c_uint64()
check(cuda.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(132 * 512 * 64 * 4)), "cuMemAlloc")
start, stop = ctypes.c_void_p(), ctypes.c_void_p()
check(cuda.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
check(cuda.cuEventCreate(ctypes.byref(stop), 0), "cuEventCreate")
for name, warps, rows, *given in KERNELS:
    shared = given[0] if given else rows * 240 + 128 * 272 + 8 * 128 * 4  # the wgmma loops' 128 x 256 token bytes fit in this too
    function = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module, name.encode()), "cuModuleGetFunction")
    check(cuda.cuFuncSetAttribute(function, 8, shared), "max dynamic shared memory")
    out_arg, windows_arg = ctypes.c_uint64(out.value), ctypes.c_int(WINDOWS)
    args = (ctypes.c_void_p * 2)(ctypes.addressof(out_arg), ctypes.addressof(windows_arg))
    times = []
    for _ in range(7):
        check(cuda.cuEventRecord(start, None), "cuEventRecord")
        check(cuda.cuLaunchKernel(function, sms.value, 1, 1, 32 * warps, 1, 1, shared, None, args, None), "cuLaunchKernel")
        check(cuda.cuEventRecord(stop, None), "cuEventRecord")
        check(cuda.cuEventSynchronize(stop), "cuEventSynchronize")
        ms = ctypes.c_float()
        check(cuda.cuEventElapsedTime(ctypes.byref(ms), start, stop), "cuEventElapsedTime")
        times.append(ms.value)
    best = sorted(times)[len(times) // 2]
    chunks = WINDOWS * 8
    cycles = best * 1e-3 / chunks * clock_khz.value * 1e3
    per_128_rows = cycles * 128 / rows
    print(f"{name}: {sms.value} blocks of {warps} warps ({rows} rows x 128 tokens), {chunks} chunks: median {best * 1e3:.1f} us, "
          f"{cycles:.0f} cycles a chunk, {per_128_rows:.0f} per 128 rows x 128 tokens x 32 k")
