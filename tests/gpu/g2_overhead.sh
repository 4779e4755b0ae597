#!/usr/bin/env bash
# Issue 17's host cost on a machine of 2+ GPUs: nccl-tests with one process driving 2 GPUs (-g 2),
# sides interleaved round by round, the process pinned with taskset to CPUs local to GPU 0; and
# Megatron-Core MoE (TP2 x DP2, EP2) on 4 GPUs with and without the shim + plugin.
# Needs CARRY (default build/gpu, made by tests/gpu/prepare_g2_carry.sh): libncclshim.so (stripped),
# ncclshim-trace, nccl-tests/ (sources as NVIDIA publishes them) or nt-bin.tgz (binaries of an
# earlier call), the megatron-core wheel; optionally libncclshim-old.so (another build to compare).
# Stages (several may be given): build, diag, diag2, table, moe, moeexample.
#   build: nccl-tests' sendrecv / alltoall / all_reduce without MPI (binaries also to $OUT/nt-bin.tgz)
#   diag:  sendrecv and alltoall, 8 B..32 KiB, ROUNDS (6) rounds; sides: NCCL alone, recording, and
#          recording + plugin with the activation masks in MASKS (NCCLSHIM_PROFILER_EVENTS); one
#          run with NCCLSHIM_PROFILER_COUNT=1 (callbacks per event type)
#   diag2: task-line formatting old / new (CARRY/fmtbench-old, -new: bench/format_line_bench.cc built
#          against each libtrace.a), sendrecv 8 B..32 KiB, DIAG_ROUNDS (4) rounds of NCCL alone,
#          recording, recording + plugin (new, old), the plugin with its records not written
#          (NCCLSHIM_PROFILER_RECORD=0); callback counts and the recorder's caller wakes per side
#   table: OPS (sendrecv alltoall all_reduce), SIZES (8 B..1 GiB: "-b 8 -e 1G -f 8"), ITERS ("-n 100
#          -w 10"), ROUNDS (10) rounds of SIDES
#          (none fwd rec plugin; recold / pluginold: recording (+ plugin) with CARRY/libncclshim-old.so)
#   moe:   tests/gpu/megatron_moe.py on 4 GPUs: twice without the shim, once with it + the plugin, and
#          the example trace (2 steps) with its run without the shim; moeexample: only the example
#          (EXAMPLE_ARGS, default 1 step of a 1-layer model) and its run without the shim
# Every run's output under $OUT/logs (returned as logs.tgz); runs.txt lists them.
set -u
OUT=${OUT:-/tmp/g2-out}
CARRY=${CARRY:-$PWD/build/gpu}
BIN=${BIN:-/tmp/nt-bin}
mkdir -p "$OUT/logs"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=python3
[ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
NCCL_DIR=${NCCL_DIR:-$($PY -c 'import nvidia.nccl as m; print(list(m.__path__)[0])')}
export LD_LIBRARY_PATH=$NCCL_DIR/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SHIM=$CARRY/libncclshim.so
BUDGET_S=${BUDGET_S:-540}
gpu0_bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 | tr 'A-F' 'a-f' | sed 's/^0000\(....\)/\1/')
local_cpus=$(cat "/sys/bus/pci/devices/$gpu0_bus/local_cpulist" 2>/dev/null || echo 0-15)
# 8 CPUs local to GPU 0, leaving out its first two.
CPUS=${CPUS:-$($PY -c "
s='$local_cpus'; c=[]
for p in s.split(','):
    a,_,b=p.partition('-'); c+=range(int(a),int(b or a)+1)
print(','.join(map(str,c[2:10] if len(c)>=10 else c)))")}
{ nvidia-smi -L; echo "NCCL_DIR $NCCL_DIR"; ls "$NCCL_DIR/lib"
  echo "GPU0 $gpu0_bus local CPUs $local_cpus; pinned to $CPUS"
  cat /sys/devices/system/clocksource/clocksource0/current_clocksource; nproc; } > "$OUT/machine.txt" 2>&1

build_tests() {
  if [ ! -x "$BIN/sendrecv_perf" ] && [ -f "$CARRY/nt-bin.tgz" ]; then
    mkdir -p "$BIN" && tar -xzf "$CARRY/nt-bin.tgz" -C "$BIN"
  fi
  if [ ! -x "$BIN/sendrecv_perf" ]; then
    local home=/tmp/nccl_home start=$SECONDS
    mkdir -p $home/lib "$BIN"
    ln -sf "$NCCL_DIR/lib/libnccl.so.2" $home/lib/libnccl.so
    ln -sfn "$NCCL_DIR/include" $home/include
    (cd "$CARRY/nccl-tests/src" && make -j16 NCCL_HOME=$home CUDA_HOME=/usr/local/cuda BUILDDIR="$BIN" \
       NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
       "$BIN/sendrecv_perf" "$BIN/alltoall_perf" "$BIN/all_reduce_perf") \
       > "$OUT/logs/build_nccl_tests.log" 2>&1
    echo "nccl-tests build: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/runs.txt"
    tar -czf "$OUT/nt-bin.tgz" -C "$BIN" sendrecv_perf alltoall_perf all_reduce_perf
  fi
}

# nt <name> <op> <side> <sizes> <iters> [VAR=value ...]: one pinned nccl-tests run on GPUs 0,1.
nt() {
  local name=$1 op=$2 side=$3 sizes=$4 iters=$5 start=$SECONDS
  shift 5
  if [ "$SECONDS" -gt "$BUDGET_S" ]; then echo "$name: skipped (past $BUDGET_S s)" >> "$OUT/runs.txt"; return; fi
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=WARN "$@")
  case $side in
    none) ;;
    fwd) env+=(LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward) ;;
    rec) env+=(LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name) ;;
    plugin) env+=(LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name NCCLSHIM_PROFILER=1) ;;
    recold) env+=(LD_PRELOAD="$CARRY/libncclshim-old.so" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name) ;;
    pluginold) env+=(LD_PRELOAD="$CARRY/libncclshim-old.so" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name
                     NCCLSHIM_PROFILER=1) ;;
    norec) env+=(LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name NCCLSHIM_PROFILER=1
                 NCCLSHIM_PROFILER_RECORD=0) ;;
    mask*) env+=(LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=/tmp/tr/$name NCCLSHIM_PROFILER=1
                 NCCLSHIM_PROFILER_EVENTS=${side#mask}) ;;
  esac
  env "${env[@]}" timeout 120 taskset -c "$CPUS" "$BIN/${op}_perf" $sizes -g 2 -c 0 $iters > "$OUT/logs/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - start)) s" >> "$OUT/runs.txt"
  if [[ $name == *count* ]] && [ -d "/tmp/tr/$name" ]; then  # trace lines by type
    local types
    types=$(cat /tmp/tr/$name/* | grep -o '"type":"[a-z_]*"' | sort | uniq -c | tr '\n' ' ')
    echo "$name lines: $types" >> "$OUT/runs.txt"
  fi
  rm -rf "/tmp/tr/$name"
}

for stage in "$@"; do
  case $stage in
    build) build_tests ;;
    diag)
      for round in $(seq 1 "${ROUNDS:-6}"); do
        for op in sendrecv alltoall; do
          for side in none rec ${MASKS:-mask0 mask0x600 mask0x606 mask0x61e plugin}; do
            nt "diag-$op-$side-r$round" $op $side "-b 8 -e 32K -f 4" "-n 1000 -w 100"
          done
        done
      done
      nt diag-count sendrecv plugin "-b 64 -e 64" "-n 1000 -w 100" NCCLSHIM_PROFILER_COUNT=1
      nt diag-count-alltoall alltoall plugin "-b 64 -e 64" "-n 1000 -w 100" NCCLSHIM_PROFILER_COUNT=1
      nt diag-count-allreduce all_reduce plugin "-b 64 -e 64" "-n 1000 -w 100" NCCLSHIM_PROFILER_COUNT=1
      ;;
    diag2)  # the cause: the plugin's callbacks alone (norec) against its records through the writer
      for b in old new; do
        [ -x "$CARRY/fmtbench-$b" ] || continue
        for i in 1 2 3; do "$CARRY/fmtbench-$b" | head -1 | sed "s/^/fmtbench-$b: /" >> "$OUT/runs.txt"; done
      done
      for round in $(seq 1 "${DIAG_ROUNDS:-4}"); do
        for side in none rec plugin pluginold norec; do
          nt "diag2-sendrecv-$side-r$round" sendrecv $side "-b 8 -e 32K -f 4" "-n 1000 -w 100"
        done
      done
      for side in rec plugin pluginold; do
        nt "diag2-count-$side" sendrecv $side "-b 8 -e 32K -f 4" "-n 1000 -w 100" NCCLSHIM_PROFILER_COUNT=1
      done
      ;;
    table)
      for round in $(seq 1 "${ROUNDS:-10}"); do
        for op in ${OPS:-sendrecv alltoall all_reduce}; do
          for side in ${SIDES:-none fwd rec plugin}; do
            nt "overhead-$op-$side-r$round" $op $side "${SIZES:--b 8 -e 1G -f 8}" "${ITERS:--n 100 -w 10}"
          done
        done
      done
      ;;
    moe|moeexample)
      $PY -m pip install -q --no-deps --no-index --target /tmp/site "$CARRY"/megatron_core-*.whl \
        > "$OUT/logs/pip.log" 2>&1
      export PYTHONPATH=/tmp/site
      run_moe() {  # <name> [env...]
        local name=$1 start=$SECONDS
        shift
        env "$@" timeout 240 $PY -m torch.distributed.run --standalone --nproc-per-node 4 tests/gpu/megatron_moe.py \
          ${MOE_ARGS:-} > "$OUT/logs/$name.log" 2>&1
        echo "$name: exit $? in $((SECONDS - start)) s; $(grep -m1 LOSSES "$OUT/logs/$name.log")" >> "$OUT/runs.txt"
      }
      if [ "$stage" = moeexample ]; then  # only the example trace and its run without the shim
        MOE_ARGS=${EXAMPLE_ARGS:---steps 1 --layers 1} run_moe moe-example LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward \
          NCCLSHIM_PROFILER=1 NCCLSHIM_TRACE_DIR="$OUT/trace_moe_example"
        MOE_ARGS=${EXAMPLE_ARGS:---steps 1 --layers 1} run_moe moe-example-plain
        "$CARRY/ncclshim-trace" validate "$OUT/trace_moe_example" > "$OUT/logs/moe_example_validate.txt" 2>&1
        (cd "$OUT" && tar -czf trace_moe_example.tgz trace_moe_example && rm -rf trace_moe_example)
        continue
      fi
      run_moe moe-plain1
      run_moe moe-shim LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_PROFILER=1 NCCLSHIM_DEBUG=INFO \
        NCCLSHIM_TRACE_DIR="$OUT/trace_moe" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING
      run_moe moe-plain2
      # The example trace (examples/traces/megatron_moe_tp2_dp2_ep2): fewer steps, the same job.
      MOE_ARGS="--steps ${EXAMPLE_STEPS:-2}" run_moe moe-example LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward \
        NCCLSHIM_PROFILER=1 NCCLSHIM_TRACE_DIR="$OUT/trace_moe_example"
      MOE_ARGS="--steps ${EXAMPLE_STEPS:-2}" run_moe moe-example-plain
      "$CARRY/ncclshim-trace" validate "$OUT/trace_moe_example" > "$OUT/logs/moe_example_validate.txt" 2>&1
      (cd "$OUT" && tar -czf trace_moe_example.tgz trace_moe_example && rm -rf trace_moe_example)
      "$CARRY/ncclshim-trace" validate "$OUT/trace_moe" > "$OUT/logs/moe_validate.txt" 2>&1
      echo "moe trace validate: exit $?" >> "$OUT/runs.txt"
      (cd "$OUT" && tar -czf trace_moe.tgz trace_moe && rm -rf trace_moe)
      ;;
  esac
done
cat "$OUT/runs.txt"
(cd "$OUT" && tar -czf logs.tgz logs && rm -rf logs)
ls -la "$OUT"
