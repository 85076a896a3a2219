#!/usr/bin/env python3
"""Session 15 device probes, compiled by NVRTC to an sm_90 cubin and run through the driver API (ctypes), so that the
device needs no CUDA toolkit:
    python3 docs/runs/2026-12-02-s15-mma-rate.py [docs/runs/2026-12-02-s15-mma-rate.cu]
        each mma kernel's rate, in multiply-adds and in TOPS/TFLOPS (2 ops a multiply-add);
    python3 docs/runs/2026-12-02-s15-mma-rate.py docs/runs/2026-12-02-s15-loop-probe.cu
        the two chunk loops, one block an SM, in µs and in cycles a chunk at the SM clock the driver reports."""
import ctypes
import sys

source = open(sys.argv[1] if len(sys.argv) > 1 else "docs/runs/2026-12-02-s15-mma-rate.cu", "rb").read()
nvrtc = ctypes.CDLL("libnvrtc.so.13")


def check(result, what):
    if result != 0:
        raise SystemExit(f"{what} failed with {result}")


prog = ctypes.c_void_p()
check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"probe.cu", 0, None, None), "nvrtcCreateProgram")
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
print(f"compiled: {size.value} bytes of sm_90 cubin")

cuda = ctypes.CDLL("libcuda.so.1")

check(cuda.cuInit(0), "cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
sms = ctypes.c_int()
check(cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, device), "multiprocessor count")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
module = ctypes.c_void_p()
check(cuda.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
blocks, threads = sms.value * 4, 256
out = ctypes.c_uint64()
check(cuda.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(blocks * threads * 4)), "cuMemAlloc")
start, stop = ctypes.c_void_p(), ctypes.c_void_p()
check(cuda.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
check(cuda.cuEventCreate(ctypes.byref(stop), 0), "cuEventCreate")
if b"loop_int8" in source:
    clock_khz = ctypes.c_int()
    check(cuda.cuDeviceGetAttribute(ctypes.byref(clock_khz), 13, device), "clock rate")
    windows = 64
    f16_shared = 128 * 224 + 128 * 528 + 8 * 128 * 4
    for name, shared in ((b"loop_int8", 128 * 240 + 128 * 272 + 8 * 128 * 4), (b"loop_f16", f16_shared),
                         (b"loop_f16_two_chains", f16_shared)):
        function = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(function), module, name), "cuModuleGetFunction")
        check(cuda.cuFuncSetAttribute(function, 8, shared), "max dynamic shared memory")
        out_arg, windows_arg = ctypes.c_uint64(out.value), ctypes.c_int(windows)
        args = (ctypes.c_void_p * 2)(ctypes.addressof(out_arg), ctypes.addressof(windows_arg))
        best = None
        for _ in range(5):
            check(cuda.cuEventRecord(start, None), "cuEventRecord")
            check(cuda.cuLaunchKernel(function, sms.value, 1, 1, 256, 1, 1, shared, None, args, None), "cuLaunchKernel")
            check(cuda.cuEventRecord(stop, None), "cuEventRecord")
            check(cuda.cuEventSynchronize(stop), "cuEventSynchronize")
            ms = ctypes.c_float()
            check(cuda.cuEventElapsedTime(ctypes.byref(ms), start, stop), "cuEventElapsedTime")
            best = ms.value if best is None else min(best, ms.value)
        chunks = windows * 8
        print(f"{name.decode()}: {sms.value} blocks of 8 warps (16 x 128 a warp), {chunks} chunks: {best * 1e3:.1f} us, "
              f"{best * 1e-3 / chunks * clock_khz.value * 1e3:.0f} cycles a chunk at {clock_khz.value / 1e6:.2f} GHz "
              f"({best * 1e-3 / chunks * 1.98e9:.0f} at 1.98 GHz)")
    raise SystemExit(0)
CHAINS = 8
for name, macs_per_mma, unit in ((b"hmma_f16_f32", 16 * 8 * 16, "TFLOPS"), (b"imma_s8_s32", 16 * 8 * 32, "TOPS")):
    function = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module, name), "cuModuleGetFunction")
    for iters in (256, 4096):
        out_arg, iters_arg = ctypes.c_uint64(out.value), ctypes.c_int(iters)
        args = (ctypes.c_void_p * 2)(ctypes.addressof(out_arg), ctypes.addressof(iters_arg))
        best = None
        for _ in range(5):
            check(cuda.cuEventRecord(start, None), "cuEventRecord")
            check(cuda.cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, None, args, None), "cuLaunchKernel")
            check(cuda.cuEventRecord(stop, None), "cuEventRecord")
            check(cuda.cuEventSynchronize(stop), "cuEventSynchronize")
            ms = ctypes.c_float()
            check(cuda.cuEventElapsedTime(ctypes.byref(ms), start, stop), "cuEventElapsedTime")
            best = ms.value if best is None else min(best, ms.value)
        macs = blocks * threads // 32 * iters * CHAINS * macs_per_mma
        print(f"{name.decode()}: {blocks} blocks x {threads} threads, {iters} x {CHAINS} mmas a warp: {best * 1e3:.1f} us, "
              f"{macs / (best * 1e-3) / 1e12:.0f} T multiply-adds/s = {2 * macs / (best * 1e-3) / 1e12:.0f} {unit}, "
              f"{macs / (best * 1e-3) / sms.value / 1.98e9:.0f} multiply-adds a clock an SM at 1.98 GHz")
