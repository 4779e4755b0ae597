#!/usr/bin/env bash
# Installs what ncclshim needs on a fresh Debian 12 machine, and only what is missing, so it is
# cheap to run before every build. On a machine without a package registry (the GPU machine) it
# checks and reports instead: everything there is preinstalled.
# Plain: what the main job needs (`make run`: build phynet and ncclshim, replay under mpirun).
# --tests: the test toolchain as well (`make test`, `make check`): Catch2, the soft-RoCE and perftest
# tools, clang for the fuzzers, GNU time, Slurm, matplotlib, chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
case "${1:-}" in
  --tests) tests=1 ;;
  "") ;;
  *) echo "setup: unknown argument '$1' (use --tests for the test toolchain)" >&2; exit 2 ;;
esac

packages=(build-essential libfmt-dev openmpi-bin libopenmpi-dev libibverbs-dev ibverbs-providers
          python3 python3-pip libtomlplusplus-dev libcli11-dev)
[ "$tests" -eq 1 ] && packages+=(catch2 rdma-core ibverbs-utils perftest)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The GPU machine has Catch2 v3 and fmt from elsewhere, CLI11 as carried in build/cli11: accept the headers found.
if [ ${#missing[@]} -gt 0 ]; then
  really_missing=()
  for p in "${missing[@]}"; do
    case "$p" in
      catch2) [ -e /usr/include/catch2/catch.hpp ] || [ -e /usr/local/include/catch2/catch_test_macros.hpp ] || [ -e /usr/include/catch2/catch_test_macros.hpp ] || really_missing+=("$p") ;;
      libfmt-dev) [ -e /usr/include/fmt/format.h ] || [ -e /usr/local/include/fmt/format.h ] || really_missing+=("$p") ;;
      libcli11-dev) [ -e /usr/include/CLI/CLI.hpp ] || [ -e /usr/local/include/CLI/CLI.hpp ] || [ -e build/cli11/include/CLI/CLI.hpp ] || really_missing+=("$p") ;;
      libtomlplusplus-dev) [ -e /usr/include/toml++/toml.h ] || [ -e /usr/local/include/toml++/toml.h ] || echo "setup: no toml++: phynet --jobs will say it is unavailable" >&2 ;;
      *) really_missing+=("$p") ;;
    esac
  done
  missing=("${really_missing[@]}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; else sudo=""; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || echo "setup: apt-get update failed (no registry?)" >&2
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || {
    echo "setup: could not install: ${missing[*]}" >&2
    exit 1
  }
fi
# Installs the packages given after the first argument that are missing; optional: where they cannot
# be installed (the GPU machine has no registry) it says what will be missing ($1) and goes on.
install_optional() {
  local consequence=$1 p missing=()
  shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "setup: installing ${missing[*]}"
  local sudo
  sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { $sudo apt-get update -qq >/dev/null 2>&1; $sudo apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } ||
    echo "setup: could not install ${missing[*]}: $consequence" >&2
}
# The Chakra and PyTorch execution-trace readers (workload/module.mk): protobuf, nlohmann's JSON, zlib.
install_optional "Chakra and PyTorch execution traces will not be read (the build says so)" \
  protobuf-compiler libprotobuf-dev nlohmann-json3-dev zlib1g-dev
# Compressed traces (NCCLSHIM_TRACE_COMPRESS=zstd; the Makefile checks for zstd.h) and the zstd CLI.
install_optional "compressed traces will not be written or read (the build says so)" libzstd-dev zstd
# CLI11's headers copied into build/cli11/include (never committed), to be carried with build/ to a
# machine without a registry (the GPU machine): the Makefile uses them where /usr/include has none.
if [ -e /usr/include/CLI/CLI.hpp ] && ! cmp -s /usr/include/CLI/CLI.hpp build/cli11/include/CLI/CLI.hpp; then
  mkdir -p build/cli11/include && rm -rf build/cli11/include/CLI && cp -r /usr/include/CLI build/cli11/include/
fi
# nccl.h comes from the nvidia-nccl wheel (never committed); this finds or fetches it.
[ -s build/nccl_cflags.txt ] || bash scripts/fetch_nccl_headers.sh build
if [ "$tests" -eq 1 ]; then
  # The reliability suites' tools (tests/suites/fuzz_tests.sh: clang-14 with libFuzzer; load_tests.sh:
  # GNU time for peak RSS).
  install_optional "the fuzz and load suites will say so" clang-14 libclang-rt-14-dev time
  install_optional "tests/suites/slurm_tests.sh will fail: no one-node Slurm" slurm-wlm
  # The fabric suite's faults: loss with an nftables rule, counters with nstat (iproute2).
  install_optional "tests/suites/fabric_tests.sh cannot make a lossy link" nftables iproute2
  python3 -c 'import matplotlib' 2>/dev/null || dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q "install ok installed" || DEBIAN_FRONTEND=noninteractive $([ "$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -qq python3-matplotlib >/dev/null 2>&1 || echo "setup: no matplotlib (python3-matplotlib not installable here): 'ncclshim plot' will skip plots" >&2
  # The report pages' browser checks (tests/suites/report_tests.sh opens every page in headless
  # chromium and fails without it).
  if ! command -v chromium >/dev/null 2>&1; then
    echo "setup: installing chromium"
    sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -qq chromium >/dev/null 2>&1 ||
      { $sudo apt-get update -qq >/dev/null 2>&1; $sudo apt-get install -y -qq chromium >/dev/null 2>&1; } ||
      echo "setup: could not install chromium: tests/suites/report_tests.sh will fail its browser checks" >&2
  fi
fi
echo "setup: ok"
