#!/usr/bin/env bash
# The job's timeline on the GPU machine (issue 41, docs/replay_time.md): captures Megatron-Core GPT at
# data parallel 2 GPU-timed (NCCLSHIM_GPU_TIMING=1, NCCL's decisions through the profiler plugin), one
# GPU per rank and each rank its own node to NCCL (NCCL_HOSTID), NCCL over its Socket transport on
# loopback; then replays the capture on the same machine with phynet --pace recorded, the same
# placement (--gpus-per-node 1), REPLAYS times, and prints per rank the communication and exposed
# communication time, capture against replay (target: within +-10 %), over the whole run and from the
# second iteration on (the first holds NCCL's connection set-up), and the overlapping op pairs.
# Needs 2 GPUs (nvidia-h200-x2), or one under MPS (tests/gpu/with_mps.sh), build/gpu/megatron_core-*.whl (tests/gpu/prepare_carry.sh), and
# phynet, ncclshim and libncclshim.so built there (Open MPI, mpicxx and libfmt-dev are installed):
#   make -j12 build/phynet build/ncclshim build/libncclshim.so
#   OUT=/tmp/gpu-out REPLAYS=3 bash tests/gpu/megatron_timeline.sh
# Writes under $OUT: the capture (trace_megatron_dp2_timed/, and a tarball to commit), the replays'
# reports (JSON, HTML), ncclshim compare's text and page, and timeline_table.md.
set -u
OUT=${OUT:-/tmp/gpu-out}
REPLAYS=${REPLAYS:-3}
STEPS=${STEPS:-8}
PY=${PY:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT"
for f in build/phynet build/ncclshim build/libncclshim.so; do
  [[ -x $f || -f $f ]] || { echo "$0: $f is not built (make -j12 build/phynet build/ncclshim build/libncclshim.so)" >&2; exit 2; }
done
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo
$PY -m pip install -q --no-deps --no-index build/gpu/megatron_core-*.whl > "$OUT/timeline_pip.log" 2>&1 ||
  echo "pip install failed" >> "$OUT/timeline_pip.log"

# The capture: 2 ranks on 2 GPUs, each rank a node (--gpus-per-node 1 sets NCCL_HOSTID per rank).
trace=$OUT/trace_megatron_dp2_timed
rm -rf "$trace"
LD_PRELOAD=$PWD/build/libncclshim.so NCCLSHIM_MODE=forward NCCLSHIM_GPU_TIMING=1 NCCLSHIM_PROFILER=1 \
  NCCLSHIM_TRACE_DIR=$trace timeout 600 $PY -m torch.distributed.run --standalone --nproc-per-node 2 \
  tests/gpu/megatron_gpt.py --tp 1 --steps "$STEPS" --gpus-per-node 1 > "$OUT/timeline_capture.log" 2>&1
echo "capture exit $?" | tee -a "$OUT/timeline_capture.log"
build/ncclshim-trace validate "$trace" | tail -1 | tee -a "$OUT/timeline_capture.log"
build/ncclshim summary "$trace" > "$OUT/timeline_summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/megatron_dp2_timed.tgz" "$(basename "$trace")"

# The replays, on the same machine and placement, paced on the capture's GPU timeline.
for ((run = 1; run <= REPLAYS; run++)); do
  timeout 600 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo build/phynet --ifname lo --gpus-per-node 1 --pace recorded --rows 0 \
    --json "$OUT/timeline_replay$run.json" --html "$OUT/timeline_replay$run.html" "$trace" \
    > "$OUT/timeline_replay$run.log" 2>&1
  echo "replay $run exit $?" | tee -a "$OUT/timeline_capture.log"
  build/ncclshim compare "$trace" "$OUT/timeline_replay$run.json" -o "$OUT/timeline_compare$run.html" \
    > "$OUT/timeline_compare$run.txt" 2>&1
done
sed -n '/^# communication and exposed/,$p' "$OUT/timeline_compare1.txt"

# The table: per rank, capture and each replay's communication and exposed time, their ratios,
# the median ratio and whether it is within +-10 %; the overlapping op pairs.
python3 - "$OUT" "$REPLAYS" <<'PY' | tee "$OUT/timeline_table.md"
import json, statistics, sys
out, replays = sys.argv[1], int(sys.argv[2])
docs = []
for run in range(1, replays + 1):
    try:
        docs.append(json.load(open(f"{out}/timeline_replay{run}.json")))
    except (OSError, ValueError) as error:
        print(f"replay {run}: no report ({error})")
if not docs or not docs[0]["timeline"]["captured"]:
    sys.exit(f"no timeline scored: {docs[0]['timeline']['note'] if docs else 'no replay'}")
print("| rank | span | figure | capture (ms) | replay (ms), each run | median ratio | within +-10 % |")
print("|---|---|---|---|---|---|---|")
for part, span in (("ranks", "whole run"), ("steady", "from iteration 1")):
    for i, row in enumerate(docs[0]["timeline"].get(part, [])):
        for key, name in (("comm_us", "communication"), ("exposed_us", "exposed communication")):
            capture = row["capture"][key]
            runs = [d["timeline"][part][i]["replay"][key] for d in docs]
            ratio = statistics.median(r / capture for r in runs) if capture else float("nan")
            print(f"| {row['rank']} | {span} | {name} | {capture / 1e3:.3f} | "
                  f"{', '.join(f'{r / 1e3:.3f}' for r in runs)} | {ratio:.3f} | "
                  f"{'yes' if abs(ratio - 1) <= 0.10 else 'NO'} |")
pairs = [d["timeline"]["replay_overlap_pairs"] for d in docs]
print(f"\noverlapping op pairs (all ranks): capture {docs[0]['timeline']['capture_overlap_pairs']}, replay "
      f"{', '.join(f'{p:.0f}' for p in pairs)}")
iterations = docs[0]["timeline"]["iterations"]
if iterations:
    print(f"training iterations scored: {len(iterations)} rank-iterations (per-iteration figures in the JSON and "
          "the compare text)")
PY
