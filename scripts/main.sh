#!/usr/bin/env bash
# The main job on a fresh machine: install NVRTC 13.0 (pip wheels into .nvrtc/, once), build, run `mmqgen run`:
# compile the selected variants, run the CPU reference and, where there is a GPU, prove and time them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=.ci/env.sh
source .ci/env.sh
mmqgen_install_nvrtc
cargo run --release --locked -p mmqgen -- run "$@"
