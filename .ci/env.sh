# shellcheck shell=bash
# Environment for building and testing mmqgen against NVRTC 13.0 without a
# system CUDA install. Sourced by .ci/run; developers can use it too:
#
#   source .ci/env.sh          # exports the variables below
#   mmqgen_install_nvrtc       # once: pip-installs the toolchain into .nvrtc/
#   cargo test -p mmqgen compile
#
# Safe to source under `set -euo pipefail` and from any directory.

MMQGEN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The pip --target folder (gitignored as /.nvrtc/).
MMQGEN_NVRTC_DIR="$MMQGEN_ROOT/.nvrtc"
# Where the wheels put the shared libraries and the binaries.
MMQGEN_CUDA_LIB="$MMQGEN_NVRTC_DIR/nvidia/cu13/lib"
MMQGEN_CUDA_BIN="$MMQGEN_NVRTC_DIR/nvidia/cu13/bin"
export MMQGEN_ROOT MMQGEN_NVRTC_DIR MMQGEN_CUDA_LIB MMQGEN_CUDA_BIN

# The toolchain wheels. NVRTC is pinned to 13.0: newer NVRTC emits PTX that
# the GPU machines' driver (580, CUDA 13.0) rejects, and cudarc is built with
# its `cuda-13000` bindings. cuobjdump/nvdisasm 13.5 read 13.0 cubins fine.
MMQGEN_NVRTC_WHEELS=(
    nvidia-cuda-nvrtc==13.0.88      # libnvrtc.so.13, libnvrtc-builtins.so.13.0
    nvidia-cuda-nvcc==13.0.88       # ptxas (for developers; NVRTC has its own)
    nvidia-cuda-cuobjdump==13.5.37  # cuobjdump, for the SASS census tests
    nvidia-cuda-nvdisasm==13.5.37   # nvdisasm (for developers; cuobjdump needs none)
)

# Installs the wheels into .nvrtc/ unless libnvrtc is already there. All four
# go in ONE pip call into an EMPTY folder: the wheels share the nvidia/
# namespace folder, and a second `pip install --target` into an existing
# nvidia/ does not merge into it.
mmqgen_install_nvrtc() {
    if [[ -f "$MMQGEN_CUDA_LIB/libnvrtc.so.13" ]]; then
        echo "NVRTC already installed in $MMQGEN_NVRTC_DIR"
        return 0
    fi
    rm -rf "$MMQGEN_NVRTC_DIR"
    PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
        python3 -m pip install --no-deps --no-input --progress-bar off \
        --target "$MMQGEN_NVRTC_DIR" "${MMQGEN_NVRTC_WHEELS[@]}"
}

# cudarc dlopens "libnvrtc.so.13" by bare name, and NVRTC dlopens
# "libnvrtc-builtins.so.13.0" by bare name, so their folder must be on the
# loader path (loading libnvrtc by absolute path is not enough).
case ":${LD_LIBRARY_PATH:-}:" in
    *":$MMQGEN_CUDA_LIB:"*) ;;
    *) export LD_LIBRARY_PATH="$MMQGEN_CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac

# cuobjdump (found on PATH by runtime/src/compile/sass.rs), ptxas, nvdisasm.
case ":$PATH:" in
    *":$MMQGEN_CUDA_BIN:"*) ;;
    *) export PATH="$MMQGEN_CUDA_BIN:$PATH" ;;
esac

# cuobjdump 13.5 disassembles sm_80/sm_90 cubins by itself. When
# NVDISASM_PATH is set it runs $NVDISASM_PATH/nvdisasm instead, and a stale
# or foreign one makes it fail silently (exit 1, no output), so clear it.
unset NVDISASM_PATH

# Make the NVRTC and cuobjdump tests fail, instead of printing
# "SKIPPED: ... not found", when the tools are missing.
export MMQGEN_REQUIRE_NVRTC=1
export MMQGEN_REQUIRE_CUOBJDUMP=1
# The C ABI test compiles C against mmqgen.h: CI has a C compiler.
export MMQGEN_REQUIRE_CC=1
