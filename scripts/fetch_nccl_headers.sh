#!/usr/bin/env bash
# Finds or fetches the real nccl.h (and the CUDA headers it includes) and writes the compiler flags
# to build/nccl_cflags.txt. Order: $NCCL_INCLUDE_DIR; an installed nvidia-nccl wheel in the current
# Python (the GPU machine); else download the wheels from PyPI and unpack only their include/ folders
# into build/wheels/. NVIDIA's headers are never committed.
set -euo pipefail
out_dir=${1:-build}
mkdir -p "$out_dir"
flags_file="$out_dir/nccl_cflags.txt"

have_header() { [ -f "$1/nccl.h" ]; }
cuda_flags() {
  # nccl.h includes cuda_runtime.h (and through it crt/host_config.h, nv/target).
  for dir in /usr/local/cuda/include "$@"; do
    [ -f "$dir/cuda_runtime.h" ] && { echo "-I$dir"; return 0; }
  done
  return 1
}

if [ -n "${NCCL_INCLUDE_DIR:-}" ] && have_header "$NCCL_INCLUDE_DIR"; then
  cuda=$(cuda_flags "${CUDA_INCLUDE_DIR:-/nonexistent}") || { echo "cuda_runtime.h not found; set CUDA_INCLUDE_DIR" >&2; exit 1; }
  echo "-I$NCCL_INCLUDE_DIR $cuda" > "$flags_file"
  exit 0
fi

site=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(list(nvidia.nccl.__path__)[0]))' 2>/dev/null || true)
if [ -n "$site" ] && have_header "$site/nccl/include" && [ -f /usr/local/cuda/include/cuda_runtime.h ]; then
  echo "-I$site/nccl/include -I/usr/local/cuda/include" > "$flags_file"
  exit 0
fi

wheels="$out_dir/wheels"
inc="$wheels/include"
if ! have_header "$inc/nvidia/nccl/include"; then
  mkdir -p "$wheels"
  echo "fetching nccl.h and CUDA runtime headers from PyPI wheels into $wheels" >&2
  python3 -m pip download --no-deps -q -d "$wheels" \
    nvidia-nccl-cu12==2.28.9 nvidia-cuda-runtime-cu12==12.9.79 \
    nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-cccl-cu12==12.9.27
  python3 - "$wheels" "$inc" <<'PY'
import glob, sys, zipfile
wheels, inc = sys.argv[1], sys.argv[2]
for path in glob.glob(f"{wheels}/*.whl"):
    with zipfile.ZipFile(path) as whl:
        for name in whl.namelist():
            if "/include/" in name:
                whl.extract(name, inc)
PY
  rm -f "$wheels"/*.whl
fi
n="$inc/nvidia"
echo "-I$n/nccl/include -I$n/cuda_runtime/include -I$n/cuda_nvcc/include -I$n/cuda_cccl/include" > "$flags_file"
