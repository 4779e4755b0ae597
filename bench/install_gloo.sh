#!/usr/bin/env bash
# Installs the Gloo peer of the benchmark: PyTorch from PyPI in a virtual environment
# (default /opt/gloo-venv; about 5 GB, as PyPI's torch wheel brings the CUDA libraries along even
# though the benchmark uses only CPU tensors). Not part of `make test`: only bench/run_bench.sh uses it.
set -euo pipefail
venv=${1:-/opt/gloo-venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
  echo "install_gloo: $venv already has torch with Gloo"
  exit 0
fi
dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed" ||
  DEBIAN_FRONTEND=noninteractive $([ "$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -qq python3-venv >/dev/null
python3 -m venv "$venv"
echo "install_gloo: pip install torch into $venv (several minutes)"
"$venv/bin/pip" install -q torch numpy
"$venv/bin/python" -c 'import torch, torch.distributed as d; print("install_gloo: torch", torch.__version__, "gloo", d.is_gloo_available())'
