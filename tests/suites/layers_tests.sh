#!/usr/bin/env bash
# The layers stay in their order (issue 14): every #include "folder/..." of a source file names a
# folder its layer may use, common <- transport <- collectives <- libshim / phynet, with trace used
# by libshim, workload, phynet and tools, workload (the input formats, the traffic model, the report
# page generator) by phynet and tools, and tools reaching only the formats (trace, workload) except
# tools/perf, the one tool that runs the engine. Inside transport/ the folders keep an order too:
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

check_folder() {  # check_folder <folder> <allowed folders...>
  local folder=$1; shift
  local out
  out=$(python3 - "$folder" "$@" <<'PY'
import glob, os, re, sys
folder, allowed = sys.argv[1], set(sys.argv[2:]) | {sys.argv[1]}
layers = {"common", "transport", "collectives", "trace", "workload", "libshim", "phynet", "tools"}
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
)
  result $? "layers/$folder" "$out"
}

check_folder common
check_folder transport common
check_folder transport/bootstrap common
check_folder transport/core common transport/bootstrap
for backend in tcp ibverbs shm inproc layered; do
  check_folder transport/$backend common transport/core transport/bootstrap
done
check_folder collectives common transport
check_folder trace common
check_folder libshim common transport collectives trace
check_folder workload common collectives trace
check_folder phynet common transport collectives trace workload
check_folder tools common trace workload tools
check_folder tools/perf common transport collectives libshim trace workload phynet tools
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
echo "$passed passed, $failed failed"
