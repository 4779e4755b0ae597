#!/usr/bin/env bash
# The layers stay in their order (issue 14): every #include "folder/..." of a source file names a
# folder its layer may use, common <- transport <- collectives <- libshim / phynet, with model (what
# NCCL would decide: tuner, node layout, trees, PAT schedule, p2p channels, PXN routes, the options
# and the one per-call choice) on common alone, below collectives and workload; trace used by
# libshim, workload, phynet and tools, workload (the input formats, the traffic model, the report
# page generator) on model, trace and common only, used by phynet and tools, and tools reaching only
# the formats and the model except tools/perf, the one tool that runs the engine (its own program,
# ncclshim-perf: the file commands' build/ncclshim neither links nor loads the engine, checked with
# ldd and nm at the end). Inside transport/ the folders keep an order too:
# bootstrap/ (sockets, unique id, the mesh set-up) <- core/ (the interface and the network
# transports' shared skeleton) <- one folder per transport (tcp/, ibverbs/, shm/, inproc/,
# layered/), which never include each other <- transport_factory (the one file that knows them all).
# <infiniband/verbs.h> appears only in transport/ibverbs/, <mpi.h> only in phynet/mpi_* and
# phynet_main.cc. One check per folder; each failure names file:line and the include. An allowed
# entry is a folder ("transport") or a subfolder ("transport/core"). The main job's build (`make main`,
# what `make run` builds) compiles no test file. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/checks.sh  # result(), passed, failed

include_violations() {  # include_violations <folder> <allowed folders...>: prints each, fails if any
  python3 - "$@" <<'PY'
import glob, os, re, sys
folder, allowed = sys.argv[1], set(sys.argv[2:]) | {sys.argv[1]}
layers = {"common", "transport", "model", "collectives", "trace", "workload", "libshim", "phynet", "tools"}
bad = []
for path in sorted(glob.glob(f"{folder}/**/*.cc", recursive=True) + glob.glob(f"{folder}/**/*.h", recursive=True)):
    if folder == "tools" and path.startswith("tools/perf/"):
        continue  # checked on its own
    for n, line in enumerate(open(path, errors="replace"), 1):
        m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
        if not m:
            continue
        quote, inc = m.groups()
        if inc == "infiniband/verbs.h" and not path.startswith("transport/ibverbs/"):
            bad.append(f"{path}:{n}: <infiniband/verbs.h> outside transport/ibverbs/")
        if inc == "mpi.h" and not (path.startswith("phynet/mpi_") or path == "phynet/phynet_main.cc"):
            bad.append(f"{path}:{n}: <mpi.h> outside phynet/mpi_*")
        first = inc.split("/")[0]
        if quote == '"' and first in layers and not any(inc.startswith(a + "/") for a in allowed):
            bad.append(f"{path}:{n}: {folder}/ may not include {inc}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

check_folder() {  # check_folder <folder> <allowed folders...>
  local out
  out=$(include_violations "$@")
  result $? "layers/$1" "$out"
}

planted_violation() {  # planted_violation <folder> <include> <allowed...>: the check must name it
  local folder=$1 include=$2; shift 2
  local tree out
  tree=$(mktemp -d)
  cp -r "$folder" "$tree/$folder"
  printf '#include "%s"\n' "$include" >"$tree/$folder/planted_violation.h"
  out=$(cd "$tree" && include_violations "$folder" "$@")
  local rc=$?
  rm -rf "$tree"
  result "$([ "$rc" -ne 0 ] && grep -q "$folder/planted_violation.h:1: $folder/ may not include $include" <<<"$out"; echo $?)" \
    "layers/planted/$folder-includes-${include%%/*}" "the check let it pass: $out"
}

check_folder common
check_folder transport common
check_folder transport/bootstrap common
check_folder transport/core common transport/bootstrap
for backend in tcp ibverbs shm inproc layered; do
  check_folder transport/$backend common transport/core transport/bootstrap
done
check_folder model common
check_folder collectives common transport model
check_folder trace common
check_folder libshim common transport model collectives trace
check_folder workload common model trace
check_folder phynet common transport model collectives trace workload
check_folder tools common trace model workload tools
check_folder tools/perf common transport model collectives libshim trace workload phynet tools
# The check fails on a planted violation of the model floor.
planted_violation workload collectives/communicator.h common model trace
planted_violation workload transport/core/transport.h common model trace
planted_violation model collectives/collectives.h common
planted_violation model workload/workload.h common
# Every NCCLSHIM_* setting is read through its declaration (common/settings.h), not by name.
direct=$(grep -rnE '(getenv|env(String|Int|Double|Bytes))\("NCCLSHIM_' common transport collectives trace workload \
  libshim phynet tools --include='*.cc' --include='*.h')
result "$([ -z "$direct" ]; echo $?)" "settings/read-through-the-table" "$direct"
# `make run` builds only what the main job runs (`make main`: phynet, ncclshim): no test object, no
# unit-test binary (make -n into an empty folder lists every compile a fresh clone would do).
plan=$(make -n --no-print-directory BUILD="$(mktemp -u /tmp/layers-main-XXXXXX)" main 2>&1)
test_compiles=$(grep -E -- ' -c tests/|unit_tests|catch' <<<"$plan" | cut -c1-200 | head -5)
grep -q -- '-o [^ ]*/phynet ' <<<"$plan" && grep -q -- '-o [^ ]*/ncclshim ' <<<"$plan" && [ -z "$test_compiles" ]
result $? "build/main-job-builds-no-tests" "make -n main: ${test_compiles:-no phynet or ncclshim link: $(tail -3 <<<"$plan")}"
# The file commands' program neither links nor loads the engine: no libncclshim.so among its
# libraries, and none of the transport's or collectives' functions in it (`ncclshim perf` is
# build/ncclshim-perf). Skipped, not passed, when it is not built.
if [ -x build/ncclshim ] && [ -e build/libtransport.a ] && [ -e build/libcollectives.a ]; then
  loaded=$(ldd build/ncclshim | grep libncclshim || true)
  result "$([ -z "$loaded" ]; echo $?)" "engine/ncclshim-loads-no-libncclshim" "$loaded"
  # The functions the engine's archives define (strong text symbols: each comes from one object
  # of transport/ or collectives/, not from a header another layer shares); none may be linked in.
  engine_symbols=$(nm --defined-only build/libtransport.a build/libcollectives.a 2>/dev/null |
    awk '$2 == "T" {print $3}' | sort -u)
  linked=$(comm -12 <(echo "$engine_symbols") <(nm --defined-only build/ncclshim | awk '{print $3}' | sort -u) |
    c++filt | head -5)
  result "$([ -n "$engine_symbols" ] && [ -z "$linked" ]; echo $?)" "engine/ncclshim-has-no-engine-symbols" \
    "transport/collective functions in build/ncclshim: $linked"
  [ -x build/ncclshim-perf ] && ldd build/ncclshim-perf | grep -q libncclshim.so
  result $? "engine/ncclshim-perf-loads-libncclshim"
fi
echo "$passed passed, $failed failed"
