#!/usr/bin/env bash
# Launched where clusters launch: a one-node Slurm (tests/lib/one_node_slurm.sh, started here) runs
# phynet under `srun --mpi=pmix` as mpirun runs it (every result byte verified, the same per-rank
# counts as under mpirun, the ranks seen on one host), a data-parallel resize under srun, a wrong
# task count named in srun's terms, and the GPU-free shim's `ncclshim perf` as ranks of srun.
# Needs root (the daemons run as root). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
work=$(mktemp -d /tmp/slurm-tests-XXXXXX)
source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/one_node_slurm.sh
source tests/lib/loopback_replay.sh  # run <np> <log> <phynet args...>: the same under mpirun
trap 'slurm_stop; rm -rf "$work"' EXIT
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo

command -v slurmctld >/dev/null && command -v srun >/dev/null
result $? "slurm/installed" "slurm-wlm is missing: bash scripts/setup.sh --tests installs it"
slurm_start "$work/slurm" >"$work/start.log" 2>&1
result $? "slurm/one-node-up" "$(cat "$work/start.log")"

per_rank() { grep -E "^# ranks? " "$1" | sed 's/wire_sent.*model_sent/model_sent/'; }
srun_phynet() {  # srun_phynet <tasks> <log> <phynet args...>
  local tasks=$1 log=$2; shift 2
  timeout 120 srun -n "$tasks" --mpi=pmix "$phynet" --ifname lo "$@" >"$log" 2>&1
}

srun_phynet 2 "$work/srun.log" --verify examples/traces/megatron_dp2; rc=$?
run 2 "$work/mpirun.log" --verify examples/traces/megatron_dp2
[ "$rc" -eq 0 ] && grep -q "0 wrong" "$work/srun.log" && [ -n "$(per_rank "$work/srun.log")" ] &&
  [ "$(per_rank "$work/srun.log")" = "$(per_rank "$work/mpirun.log")" ]
result $? "srun/phynet-as-under-mpirun" "rc $rc: $(per_rank "$work/srun.log") vs $(per_rank "$work/mpirun.log"); $(grep -m3 -i "error\|refus" "$work/srun.log")"
grep -q "(1 hosts;" "$work/srun.log" && grep -q "(same host)" "$work/srun.log"
result $? "srun/ranks-on-one-host" "$(grep -A3 'traffic between hosts' "$work/srun.log")"

srun_phynet 8 "$work/resize.log" --resize dp=4 --verify tests/data/scale/megatron_tp2_dp2_distopt; rc=$?
[ "$rc" -eq 0 ] && grep -q "0 wrong" "$work/resize.log"
result $? "srun/resize-dp4-8-tasks" "rc $rc: $(grep -m3 -i "error\|refus\|wrong" "$work/resize.log")"

srun_phynet 4 "$work/count.log" examples/traces/megatron_dp2; rc=$?
[ "$rc" -ne 0 ] && grep -q "the workload has 2 ranks but srun started 4: run with -n 2" "$work/count.log"
result $? "srun/wrong-task-count-named" "rc $rc: $(grep -m2 refus "$work/count.log")"

timeout 120 srun -n 2 "$BUILD/ncclshim" perf all_reduce -b 1M -e 4M -n 5 -w 1 >"$work/perf.log" 2>&1; rc=$?
[ "$rc" -eq 0 ] && grep -q "all_reduce, 2 ranks" "$work/perf.log" && grep -q "Out of bounds values : 0 OK" "$work/perf.log"
result $? "srun/gpu-free-shim-perf-2-tasks" "rc $rc: $(tail -4 "$work/perf.log")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
