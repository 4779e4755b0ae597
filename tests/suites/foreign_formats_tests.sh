#!/usr/bin/env bash
# Chakra and PyTorch execution traces end to end (run by tests/run_all.sh after `make`): ASTRA-sim's
# example ETs (tests/data/chakra/, with their licence) are told by content, summarised and replayed
# by phynet with --verify (0 wrong) on 4 and 8 ranks; PARAM's ResNet execution trace
# (tests/data/pytorch_et/) is summarised and replayed on its 2 ranks; the Megatron TP2 capture exported
# with `convert --to chakra` replays to the capture's per-rank op counts (less its one-rank collectives,
# written as compute) and bytes;
# refusals quote what is wrong (a missing rank file, two traces in one directory, a gzip file, a
# trace without communication). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tool="$BUILD/ncclshim"
phynet="$BUILD/phynet"
work=$(mktemp -d /tmp/foreign-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT
source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank
[ -x "$tool" ] && [ -x "$phynet" ] || { echo "missing $tool or $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
if ! "$tool" summary tests/data/chakra/astra_all_reduce_4npus >"$work/probe.txt" 2>&1 &&
   grep -q "built without protobuf, nlohmann-json and zlib" "$work/probe.txt"; then
  echo "this build has no protobuf (scripts/setup.sh installs it): $(cat "$work/probe.txt")"
  echo "0 passed, 1 failed"
  exit 1
fi

source tests/lib/loopback_replay.sh  # run <np> <log> <phynet args...>: mpirun over loopback TCP, bounded
zero_wrong() { grep -q "data check .*, 0 wrong)" "$1"; }

# summarise_and_replay <kind> <name> <input> <np> <title>: the summary names the format, and a replay
# with every byte verified has 0 wrong.
summarise_and_replay() {
  local kind=$1 name=$2 input=$3 np=$4 title=$5 rc
  "$tool" summary "$input" >"$work/$name.summary" 2>&1
  result $? "$kind/$name/summary" "$(tail -3 "$work/$name.summary")"
  grep -q "$title" "$work/$name.summary"
  result $? "$kind/$name/summary-says-$kind" "$(head -3 "$work/$name.summary")"
  run "$np" "$work/$name.replay" --verify "$input"
  rc=$?
  [ "$rc" -eq 0 ] && zero_wrong "$work/$name.replay"
  result $? "$kind/$name/replay-verify-0-wrong" "rc $rc: $(tail -4 "$work/$name.replay")"
}

# ---- ASTRA-sim's microbenchmarks and its MSCCL ring: summary, then a verified replay
for sample in astra_all_reduce_4npus astra_all_gather_4npus astra_reduce_scatter_4npus astra_all_to_all_4npus \
              astra_custom_ring_allreduce_8npus; do
  summarise_and_replay chakra "$sample" "tests/data/chakra/$sample" "$(ls tests/data/chakra/$sample/*.et | wc -l)" "Chakra ET"
done
# The ring: 14 sends and 14 receives of 128 KiB per rank, 7 compute gaps of 7 us.
grep -q "224 operations" "$work/astra_custom_ring_allreduce_8npus.summary" ||
  grep -q "224 op" "$work/astra_custom_ring_allreduce_8npus.summary"
result $? "chakra/ring/224-ops" "$(grep -m3 -i "operations\|ops" "$work/astra_custom_ring_allreduce_8npus.summary")"

# ---- the capture exported to Chakra replays the same per-rank ops and bytes as the capture
"$tool" convert examples/traces/megatron_tp2 --to chakra -o "$work/export/" >"$work/convert.log" 2>&1
result $? "chakra/export/convert" "$(cat "$work/convert.log")"
[ -f "$work/export/ncclshim.0.et" ] && [ -f "$work/export/ncclshim.1.et" ] && [ -f "$work/export/comm_group.json" ]
result $? "chakra/export/files" "$(ls "$work/export")"
run 2 "$work/capture.replay" --verify examples/traces/megatron_tp2
run 2 "$work/export.replay" --verify "$work/export"
rc=$?
[ "$rc" -eq 0 ] && zero_wrong "$work/export.replay" && zero_wrong "$work/capture.replay"
result $? "chakra/export/replay-verify-0-wrong" "rc $rc: $(tail -4 "$work/export.replay")"
# Per rank: the export's ops are the capture's less its collectives on one-rank communicators (written
# as compute: they move nothing), and the bytes each rank sent are the capture's.
alone=$(sed -nE 's/.*, ([0-9]+) collectives of one rank as compute.*/\1/p' "$work/convert.log")
rank_lines "$work/capture.replay" | sed -nE 's/^# rank ([0-9]+): ops ([0-9]+) .* wire_sent ([0-9]+) .*/\1 \2 \3/p' >"$work/a.txt"
rank_lines "$work/export.replay" | sed -nE 's/^# rank ([0-9]+): ops ([0-9]+) .* wire_sent ([0-9]+) .*/\1 \2 \3/p' >"$work/b.txt"
awk -v alone="${alone:-x}" 'NR == FNR { ops[$1] = $2; sent[$1] = $3; n++; next }
     { if (!($1 in ops) || $2 != ops[$1] - alone / n || $3 != sent[$1]) bad = 1; m++ }
     END { exit (bad || m != n || n == 0) }' "$work/a.txt" "$work/b.txt"
result $? "chakra/export/capture-ops-and-bytes" "one-rank ops ${alone:-?}; capture: $(tr '\n' ' ' <"$work/a.txt") export: $(tr '\n' ' ' <"$work/b.txt")"

# ---- PARAM's execution traces, read gzipped as PARAM keeps them: ResNet (schema 1.1.0, rank 1 of 2:
#      its ops all run on the world, so both ranks replay it), Chakra's 1.0.2 all-gather sample, and
#      DLRM on 8 ranks (one file per rank, uneven all-to-all as grouped sends and receives)
for sample in param_resnet_2gpu_1.1.0/resnet_2gpu_et.json.gz chakra_allgather_1.0.2/1.0.2-chakra.0.0.4.json.gz \
              param_dlrm_8ranks; do
  input=tests/data/pytorch_et/$sample
  if [ -d "$input" ]; then
    summarise_and_replay pytorch-et "$sample" "$input" "$(ls "$input" | grep -c '\.json')" "PyTorch execution trace"
  else
    summarise_and_replay pytorch-et "$(dirname "$sample")" "$input" 2 "PyTorch execution trace"
  fi
done
grep -q "alltoallv send" "$work/param_dlrm_8ranks.summary" && grep -q "alltoallv recv" "$work/param_dlrm_8ranks.summary"
result $? "pytorch-et/dlrm/uneven-all-to-all-rows" "$(grep -m4 alltoall "$work/param_dlrm_8ranks.summary")"

# ---- refusals say what is wrong
mkdir -p "$work/partial" && cp tests/data/chakra/astra_all_reduce_4npus/all_reduce.{1,2,3}.et "$work/partial/"
"$tool" summary "$work/partial" >"$work/partial.log" 2>&1
[ $? -ne 0 ] && grep -q "rank 0 of 4 missing: no .*all_reduce.0.et" "$work/partial.log"
result $? "refuse/chakra-missing-rank" "$(cat "$work/partial.log")"
mkdir -p "$work/two" && cp tests/data/chakra/astra_all_reduce_4npus/*.et tests/data/chakra/astra_all_gather_4npus/*.et "$work/two/"
"$tool" summary "$work/two" >"$work/two.log" 2>&1
[ $? -ne 0 ] && grep -q "holds 2 Chakra traces (all_gather, all_reduce)" "$work/two.log"
result $? "refuse/chakra-two-traces" "$(cat "$work/two.log")"
printf 'not,a,trace\n' | gzip >"$work/other.gz"
"$tool" summary "$work/other.gz" >"$work/gz.log" 2>&1
[ $? -ne 0 ] && grep -q "gzip-compressed, and neither a Chakra nor a PyTorch execution trace inside" "$work/gz.log"
result $? "refuse/gzip-of-something-else" "$(cat "$work/gz.log")"
"$tool" summary tests/data/pytorch_et/param_pt2_1.1.1/pt2_et.json >"$work/nocomm.log" 2>&1
rc=$?
grep -qi "record_param_comms\|no communication\|no operation" "$work/nocomm.log"
result $? "refuse-or-say/pytorch-et-without-comms" "rc $rc: $(head -3 "$work/nocomm.log")"
head -c 200000 tests/data/pytorch_et/param_resnet_2gpu_1.1.0/resnet_2gpu_et.json.gz >"$work/cut.json.gz"
"$tool" summary "$work/cut.json.gz" >"$work/cut.log" 2>&1
[ $? -ne 0 ] && grep -q "the gzip stream ends early (a cut file?)" "$work/cut.log"
result $? "refuse/gzip-cut-short" "$(cat "$work/cut.log")"
printf '{"hello": 1}\n' >"$work/other.json"
"$tool" summary "$work/other.json" >"$work/other.log" 2>&1
[ $? -ne 0 ] && grep -q "neither an ncclshim trace" "$work/other.log"
result $? "refuse/unknown-json" "$(cat "$work/other.log")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
