#!/usr/bin/env bash
# NCCL's decisions captured by libncclshim.so as its own profiler plugin, on the GPU machine with
# ONE GPU: every MPI rank is its own node to NCCL (tests/gpu/as_node.sh sets NCCL_HOSTID), all on
# the one GPU, so every hop between ranks crosses NCCL's network transport (Socket over loopback).
# nccl-tests is built here from the sources carried in build/gpu/nccl-tests (MPI=1; binaries in
# build-nt/, not carried, kept while the machine stays warm). Needs build/gpu/ from
# tests/gpu/prepare_profiler_carry.sh. Leaves under $OUT: runs.txt (one line per run), logs.tgz
# (every run's nccl-tests output with NCCL's INFO log), traces.tgz (every run's trace directory),
# nccl-tests-bin.tgz (the binaries, to carry to a later call). A run that would start after
# BUDGET_S seconds (default 480) is skipped and said.
#   stage all: build; all_reduce on 2 nodes without the shim; 7 ops on 2 nodes with it; forced
#              NCCL_ALGO / NCCL_PROTO; 4 nodes
#   stage overhead: (also part of all) one process, one rank: NCCL alone / forwarding / recording /
#              recording + plugin, 3 interleaved rounds of sendrecv and all_reduce, 8 B..32 KiB
#   stage where: the overhead rounds with the hook's path alone (noop) and a sleeping writer (quiet)
#   stage drain: the writer's drain against the calling thread (needs build/gpu/libncclshim-before.so)
#   stage smoke: build, all_reduce on 2 nodes without and with the shim, 4 nodes with it
#   stage topology: 4 nodes x 1 GPU, NCCL's rings / trees (GRAPH log) and network bytes per peer for
#              all_reduce (also Tree forced), all_gather, reduce_scatter, broadcast, alltoall, 8K..32M
#              (issue 18's ground truth where only one GPU is lent)
#   stage topology2: the same on 4 nodes x 2 GPUs (tests/gpu/as_node_of_two.sh; a 2-GPU machine)
#   stage torch2: PyTorch (torchrun, 8 processes) as 4 nodes x 2 GPUs: all_reduce, all_gather,
#              reduce_scatter, broadcast, all_to_all at 8K, 1M, 64M, traced with the plugin
#              (tests/gpu/torch_topology.py; runs named topo-torch-<op>-n4x2 like topology2's)
#   stage tuning: NCCL's choices (algorithm / protocol / channels per op and size) and its tuning
#              inputs (GRAPH patterns, TUNING table) for all_reduce, all_gather, reduce_scatter,
#              broadcast, 8 B..256 MiB, on LAYOUTS (default 4x1 8x1 4x2 8x2 16x1; NxG = N nodes of G
#              ranks, G=1 through tests/gpu/as_node_spread.sh, G=2 through as_node_of_two.sh; a
#              2-GPU machine); runs named tune-<op>-n<layout> (tests/gpu/tuning_ground_truth.py)
#   stage overhead2: one process driving 2 GPUs (nccl-tests -g 2), 8 B..1 GiB, NCCL alone /
#              forwarding / recording / recording + plugin, 3 interleaved rounds (a 2-GPU machine)
set -u
stage=${1:-smoke}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
NCCL_DIR=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl
PY=/opt/torch/.venv/bin/python
SHIM=$PWD/build/gpu/libncclshim.so
SRC=$PWD/build/gpu/nccl-tests
BIN=${BIN:-$PWD/build-nt}
BUDGET_S=${BUDGET_S:-480}
SIZES=${SIZES:-"-b 8 -e 4M -f 8"}
export LD_LIBRARY_PATH=$NCCL_DIR/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0

build_tests() {
  if [ ! -x "$BIN/sendrecv_perf" ] && [ -f build/gpu/nccl-tests-bin.tgz ]; then
    mkdir -p "$BIN" && tar -xzf build/gpu/nccl-tests-bin.tgz -C "$BIN"
  fi
  [ -x "$BIN/sendrecv_perf" ] && return 0
  local home=/tmp/nccl_home mpi=/tmp/mpi_home
  mkdir -p $home/lib $mpi
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" $home/lib/libnccl.so
  ln -sfn "$NCCL_DIR/include" $home/include
  ln -sfn "$(mpicc --showme:incdirs | awk '{print $1}')" $mpi/include
  ln -sfn "$(mpicc --showme:libdirs | awk '{print $1}')" $mpi/lib
  local start=$SECONDS
  (cd "$SRC" && make -j16 MPI=1 MPI_HOME=$mpi NCCL_HOME=$home CUDA_HOME=/usr/local/cuda BUILDDIR="$BIN" \
     NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90") > "$OUT/build_nccl_tests.log" 2>&1
  echo "nccl-tests build: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/build_nccl_tests.log"
}

# run <name> <nodes> <op> [VAR=value ...]: nccl-tests <op>_perf with the shim and the plugin
# (unless SHIM=none), each rank its own node; trace in $OUT/traces/<name>, output in $OUT/<name>.log.
run() {
  local name=$1 nodes=$2 op=$3
  shift 3
  local xs=() v start=$SECONDS
  if [ "$SECONDS" -gt "$BUDGET_S" ]; then echo "$name: skipped (past ${BUDGET_S} s)" | tee -a "$OUT/runs.txt"; return; fi
  for v in "$@"; do xs+=(-x "$v"); done
  local side=${SHIM_SIDE:-plugin} trace_dir=${TRACE_ROOT:-$OUT/traces}/$name
  [ "$side" != none ] && xs+=(-x SHIM_PRELOAD="${SHIM_LIB:-$SHIM}" -x NCCLSHIM_MODE=forward)
  [ "$side" = rec ] || [ "$side" = plugin ] && xs+=(-x NCCLSHIM_TRACE_DIR="$trace_dir")
  [ "$side" = plugin ] && xs+=(-x NCCLSHIM_PROFILER=1)
  [ "$side" = noop ] && xs+=(-x NCCLSHIM_HOOK_DEBUG=noop)          # the hook's path, empty body
  [ "$side" = quiet ] && xs+=(-x NCCLSHIM_TRACE_DIR="$trace_dir" -x NCCLSHIM_TRACE_FLUSH_MS=100000 \
                               -x NCCLSHIM_TRACE_RING=1048576)       # recording, writer asleep
  timeout "${RUN_TIMEOUT:-240}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$nodes" --mca btl self,tcp \
    -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NCCL_IB_DISABLE -x NCCL_NET -x NCCL_SOCKET_IFNAME -x NCCL_TESTS_DEVICE \
    -x NCCL_DEBUG="${NCCL_DEBUG:-INFO}" -x NCCL_DEBUG_SUBSYS="${SUBSYS:-INIT,ENV,TUNING}" "${xs[@]}" \
    "${AS_NODE:-tests/gpu/as_node.sh}" "$BIN/${op}_perf" $SIZES -g "${GPUS:-1}" -c 1 ${ITERS:--n 4 -w 1} > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s; $(grep -m1 'Out of bounds' "$OUT/$name.log"); $(grep -m1 'Avg bus' "$OUT/$name.log")" \
    | tee -a "$OUT/runs.txt"
}

nvidia-smi -L > "$OUT/gpus.txt" 2>&1
if [ "$stage" = torch2 ]; then  # PyTorch, no nccl-tests needed: needs a 2-GPU machine
  for op in all_reduce all_gather reduce_scatter broadcast all_to_all; do
    name=topo-torch-$op-n4x2 start=$SECONDS
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward \
      NCCLSHIM_TRACE_DIR="$OUT/traces/$name" NCCLSHIM_PROFILER=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
      NVSHMEM_DISABLE_NVLS=1 timeout 300 /opt/torch/.venv/bin/torchrun --nproc-per-node 8 \
      tests/gpu/torch_topology.py "$op" > "$OUT/$name.log" 2>&1
    echo "$name: exit $? in $((SECONDS - start)) s; $(grep -c 'failed=0' "$OUT/$name.log") ranks all passed" \
      | tee -a "$OUT/runs.txt"
  done
  (cd "$OUT" && tar -czf logs.tgz *.log && rm -f *.log && tar -czf traces.tgz -C traces . && rm -rf traces)
  exit 0
fi
build_tests
if [ "$stage" = smoke ]; then
  SHIM_SIDE=none run plain-all_reduce-n2 2 all_reduce
  run all_reduce-n2 2 all_reduce
  run all_reduce-n4 4 all_reduce
fi
if [ "$stage" = all ]; then
  SHIM_SIDE=none run plain-all_reduce-n2 2 all_reduce
  for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
    run "$op-n2" 2 "$op"
  done
  for algo in Ring Tree; do
    for proto in LL Simple; do run "all_reduce-n2-$algo-$proto" 2 all_reduce NCCL_ALGO=$algo NCCL_PROTO=$proto; done
  done
  for op in all_gather reduce_scatter broadcast reduce; do
    for proto in LL Simple; do run "$op-n2-Ring-$proto" 2 "$op" NCCL_ALGO=Ring NCCL_PROTO=$proto; done
  done
  for op in all_gather reduce_scatter alltoall sendrecv; do run "$op-n4" 4 "$op"; done
  run all_reduce-n4 4 all_reduce
  run all_reduce-n4-Ring-Simple 4 all_reduce NCCL_ALGO=Ring NCCL_PROTO=Simple
fi
if [ "$stage" = topology ]; then
  for op in all_reduce all_gather reduce_scatter broadcast alltoall; do
    SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8K -e 32M -f 8" run "topo-$op-n4" 4 "$op"
  done
  SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8K -e 32M -f 8" run "topo-all_reduce-n4-Tree" 4 all_reduce NCCL_ALGO=Tree
fi
if [ "$stage" = topology2 ]; then  # 4 nodes x 2 GPUs: needs a 2-GPU machine
  for op in all_reduce all_gather reduce_scatter broadcast alltoall; do
    AS_NODE=tests/gpu/as_node_of_two.sh SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8K -e 32M -f 8" run "topo-$op-n4x2" 8 "$op"
  done
  AS_NODE=tests/gpu/as_node_of_two.sh SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8K -e 32M -f 8" \
    run "topo-all_reduce-n4x2-Tree" 8 all_reduce NCCL_ALGO=Tree
fi
if [ "$stage" = pat ]; then  # NCCL's PAT: N nodes x 1 GPU spread over the GPUs there
  for nodes in ${PAT_NODES:-8 5}; do
    for op in all_gather reduce_scatter; do
      # NCCL's own choice where it picks PAT (tests/data/nccl_tuning: 4K..128K on 8 nodes) ...
      AS_NODE=tests/gpu/as_node_spread.sh SUBSYS=INIT,GRAPH,TUNING SIZES="-b 4K -e 128K -f 4" \
        run "pat-$op-n$nodes" "$nodes" "$op"
      # ... and PAT forced up to sizes where it cuts the data into several chunks
      AS_NODE=tests/gpu/as_node_spread.sh SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8K -e 32M -f 8" \
        run "pat-$op-n$nodes-PAT" "$nodes" "$op" NCCL_ALGO=PAT
    done
  done
fi
if [ "$stage" = tuning ]; then  # needs a 2-GPU machine
  for layout in ${LAYOUTS:-4x1 8x1 4x2 8x2 16x1}; do
    per=${layout#*x} wrap=tests/gpu/as_node_spread.sh
    [ "$per" = 2 ] && wrap=tests/gpu/as_node_of_two.sh
    for op in all_reduce all_gather reduce_scatter broadcast; do
      AS_NODE=$wrap SUBSYS=INIT,GRAPH,TUNING SIZES="-b 8 -e 256M -f 4" ITERS="-n 2 -w 1 -c 0" \
        run "tune-$op-n$layout" $((${layout%x*} * per)) "$op"
    done
  done
fi
if [ "$stage" = overhead2 ]; then  # one process, 2 GPUs (-g 2): needs a 2-GPU machine
  for round in 1 2 3; do
    for op in sendrecv all_reduce all_gather reduce_scatter alltoall; do
      for side in none fwd rec plugin; do
        GPUS=2 SHIM_SIDE=$side TRACE_ROOT=/tmp/ov-traces NCCL_DEBUG=WARN SIZES="-b 8 -e 1G -f 8" \
          ITERS="-n 20 -w 5 -c 0" run "overhead-$op-$side-r$round" 1 "$op"
      done
    done
  done
fi
if [ "$stage" = drain ]; then
  # The writer's drain against the calling thread, sendrecv (4 recorded calls per iteration):
  # build/gpu/libncclshim-before.so (fixed drain interval) recording as is, with a ring that never
  # fills (ring), draining every 1 ms on its timer (fast); and this build (adaptive interval),
  # recording and recording + plugin. Side names: overhead-sendrecv-<side>-r<round>.
  before=$PWD/build/gpu/libncclshim-before.so
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for side in ${DRAIN_SIDES:-none fwd rec ring fast after afterplugin}; do
      env_side=rec lib=$before extra=()
      case $side in
        none|fwd) env_side=$side ;;
        ring) extra=(NCCLSHIM_TRACE_RING=1048576) ;;
        fast) extra=(NCCLSHIM_TRACE_FLUSH_MS=1) ;;
        after) lib=$SHIM ;;
        afterplugin) lib=$SHIM env_side=plugin ;;
      esac
      SHIM_SIDE=$env_side SHIM_LIB=$lib TRACE_ROOT=/tmp/ov-traces NCCL_DEBUG=WARN SIZES="-b 8 -e 32K -f 4" \
        ITERS="-n 500 -w 50 -c 0" run "overhead-sendrecv-$side-r$round" 1 sendrecv "${extra[@]}"
    done
  done
fi
if [ "$stage" = where ]; then
  # Where the recording cost sits: the hook's path alone (noop) and recording with the writer
  # thread asleep (quiet: a ring that never fills, no drain during the run) beside the sides above.
  for round in 1 2 3; do
    for op in sendrecv all_reduce; do
      for side in none fwd noop rec quiet; do
        SHIM_SIDE=$side TRACE_ROOT=/tmp/ov-traces NCCL_DEBUG=WARN SIZES="-b 8 -e 32K -f 4" ITERS="-n 500 -w 50 -c 0" \
          run "overhead-$op-$side-r$round" 1 "$op"
      done
    done
  done
fi
if [ "$stage" = all ] || [ "$stage" = overhead ]; then
  # Host cost per call on one GPU, one process (NCCL's one-rank paths: sendrecv is a grouped
  # send + recv to itself per iteration, all_reduce NCCL's one-rank copy): NCCL alone, forwarding,
  # recording, recording + plugin; rounds interleaved; each side's best per size is the figure.
  for round in 1 2 3; do
    for op in sendrecv all_reduce; do
      for side in none fwd rec plugin; do
        SHIM_SIDE=$side TRACE_ROOT=/tmp/ov-traces NCCL_DEBUG=WARN SIZES="-b 8 -e 32K -f 2" ITERS="-n 500 -w 50 -c 0" \
          run "overhead-$op-$side-r$round" 1 "$op"
      done
    done
  done
fi
# What NCCL said about the emulated nodes and the plugin, and the first run's table.
grep -h "nNodes\|NCCL version\|PROFILER/Plugin\|profiler plugin\|nccl-tests version\|Duplicate" "$OUT"/*all_reduce-n*.log \
  | sed 's/^[^ ]* //' | sort | uniq -c | head -20
grep -hE "^ +[0-9]+ +[0-9]+ +float" "$OUT"/*all_reduce-n[24].log | head -8
# Everything back in few files ($OUT returns at most 8).
(cd "$OUT" && tar -czf logs.tgz *.log && rm -f *.log && [ -d traces ] && tar -czf traces.tgz traces && rm -rf traces)
[ -x "$BIN/sendrecv_perf" ] && tar -czf "$OUT/nccl-tests-bin.tgz" -C "$BIN" $(cd "$BIN" && ls *_perf)
ls -la "$OUT"
