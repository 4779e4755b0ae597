#!/usr/bin/env bash
# AICB's own workload files through phynet (run by tests/run_all.sh after `make`; about 30 s on 2
# cores). The files are AICB's, unchanged (tests/data/aicb/README.md: source, commit, licence):
#   pp8/*   L65B-M1-C05 tp2_pp8, a 128-rank job in 8 pp_stage blocks, folded onto 16 ranks (TP=2,
#           PP=8, DP=1): each stage's ranks replay exactly their block's ops, counted here by awk from
#           the file (collectives on groups of more than one rank that move data, pipeline rows that
#           have a neighbour, and the last stage's embedding rows on the first stage too), with
#           --verify (0 wrong) at --scale 1e-4; the same file with stage 3's first recv_prev moved
#           to its block's end is refused before traffic, naming the waiting ranks and file lines; and
#           with --pxn on 4 ranks per node (--intra-node shm): the pipeline's send/recv relayed through
#           the node-mate on the destination's rail, 0 wrong, between nodes only rails carry them.
#   fold/*  the 128-rank L7B-D1-C01 (ZeRO-2, a 128-rank dp_group) and G13B-M1-C01 (TP=8, a 16-rank
#           dp_group) CSVs on 8 ranks: DP folds (said once), every rank replays the hand-counted ops
#           (L7B: 6 allgather + 8 allreduce + 291 broadcast on dp and 1 barrier = 306; G13B: 166 + 3 on
#           tp, the dp rows are on a group of one rank = 169), --verify 0 wrong.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
data=tests/data/aicb
work=$(mktemp -d /tmp/aicb-files-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh      # result(), passed, failed
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank

[ -x "$phynet" ] || { echo "missing $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }

source tests/lib/loopback_replay.sh  # run <np> <log> <phynet args...>: mpirun over loopback TCP, bounded

# ops_of <log> <rank>: the op count of one rank from the report.
ops_of() { rank_lines "$1" | sed -n "s/^# rank $2: ops \([0-9]*\) .*/\1/p"; }

# ---- pp8: the L65B tp2_pp8 file on 16 ranks
pp8="$work/L65B_tp2_pp8.csv"
zcat "$data/L65B-M1-C05_Llama65B_megatron_tp2_pp8_mbs1.csv.gz" >"$pp8"
awk -F, '
  /^\[ pp_stage/ { match($0, /pp_stage[0-9]+/); s = substr($0, RSTART + 8, RLENGTH - 8) + 0; next }
  $1 == "comm_type" { next }
  {
    t = $1; sub(/CommType\./, "", t); g = $2; sub(/CommGroup\./, "", g); add = $8
    if (t == "computation" || t == "epoch_end") next
    if (t == "isend" || t == "irecv") {
      if ((s == 0 && add ~ /_prev/) || (s == 7 && add ~ /_next/)) next
      n[s]++; next
    }
    if (g == "dp_group" || $4 + 0 == 0) next
    n[s]++
    if (g == "embedding_group") n[0]++
  }
  END { for (i = 0; i < 8; i++) print i, n[i] }' "$pp8" >"$work/expected.txt"

run 16 "$work/pp8.log" --verify --scale 1e-4 --rows 0 "$pp8"
rc=$?
result "$rc" "pp8/replays-on-16-ranks-with-verify" "$(tail -5 "$work/pp8.log")"
grep -q "data check .*, 0 wrong)" "$work/pp8.log"
result $? "pp8/verify-0-wrong" "$(grep 'data check' "$work/pp8.log")"
wrong=""
while read -r stage count; do
  for rank in $((2 * stage)) $((2 * stage + 1)); do
    got=$(ops_of "$work/pp8.log" "$rank")
    [ "$got" = "$count" ] || wrong="$wrong rank $rank (stage $stage): $got ops, its block has $count;"
  done
done <"$work/expected.txt"
[ -z "$wrong" ] && [ "$(wc -l <"$work/expected.txt")" -eq 8 ]
result $? "pp8/each-stage-runs-its-block ($(tr '\n' ' ' <"$work/expected.txt"))" "$wrong"

# Stage 3's first recv_prev moved to the end of its block: stage 2 and 3 then both wait in sends.
awk '/^\[ pp_stage3/ { in3 = 1 } /^\[ pp_stage4/ { if (held != "") print held; in3 = 0 }
     in3 && held == "" && /CommType.irecv/ && /recv_prev/ { held = $0; next } { print }' "$pp8" >"$work/deadlock.csv"
run 16 "$work/deadlock.log" --verify --scale 1e-4 "$work/deadlock.csv"
rc=$?
[ "$rc" -ne 0 ] && grep -q "refusing to replay (no traffic was sent): communicator .* (pp) deadlocks" "$work/deadlock.log" &&
  grep -q "(stage 2) waits in send" "$work/deadlock.log" && grep -q "(stage 3) waits in send" "$work/deadlock.log" &&
  grep -q "deadlock.csv:[0-9]*) for rank" "$work/deadlock.log"
result $? "pp8/deadlock-refused-before-traffic-naming-stages-and-lines" "$(grep -m1 refusing "$work/deadlock.log" | cut -c1-400)"

# ---- pp8 with --pxn on 4 ranks per node: the pipeline's own send/recv go through the relay
#      (collectives/pxn_relay.h) of the node-mate on the destination's rail; every byte verified, between
#      nodes no off-rail pipeline pair (stage k to k+1, same tp rank) carries bytes, and each host pair
#      carries what the model says (a relayed send's forward is counted with its sender in the model).
run 16 "$work/pxn.log" --verify --scale 1e-4 --rows 0 --pxn --gpus-per-node 4 --intra-node shm --json "$work/pxn.json" "$pp8"
rc=$?
[ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/pxn.log"
result $? "pp8-pxn/relayed-send-recv-verify-0-wrong" "rc $rc: $(tail -3 "$work/pxn.log")"
python3 - "$work/pxn.json" >"$work/pxn.cmp" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rails = pp_off = other_off = relays = 0
for x in r["ranks"]:
    a = x["rank"]
    relays += x["wire_sent"] != x["model_sent"]  # a relay's row holds forwards its model lacks
    for p in x["peer_bytes"]:
        b = p["peer"]
        if not p["sent"] or a // 4 == b // 4: continue
        if a % 4 == b % 4: rails += 1
        elif a % 2 == b % 2 and abs(a // 2 - b // 2) == 1: pp_off += 1
        else: other_off += 1  # collectives of 2-rank groups across nodes (embedding): no PXN there
exact = all(h["traffic"]["bytes"] == h["traffic"]["model_bytes"] for h in r["host_pairs"])
print(f"between nodes {rails} rail pairs carry bytes, {pp_off} off-rail pipeline pairs, {other_off} off-rail "
      f"pairs of 2-rank groups; host pairs as the model: {exact}; {relays} relay rows")
sys.exit(0 if rails > 0 and pp_off == 0 and exact and relays > 0 else 1)
PY
result $? "pp8-pxn/between-nodes-only-rails-carry-pipeline-bytes-hosts-as-model" "$(cat "$work/pxn.cmp")"

# ---- fold: 128-rank CSVs on 8 ranks
for pair in "L7B-D1-C01_Llama7B_zero2_mbs1.csv 306" "G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1.csv 169"; do
  set -- $pair
  name=${1%%_*}
  run 8 "$work/$name.log" --verify --scale 1e-4 --rows 0 "$data/$1"
  rc=$?
  result "$rc" "fold/$name-replays-on-8-ranks" "$(tail -5 "$work/$name.log")"
  folds=$(grep -c "folded onto" "$work/$name.log")
  [ "$folds" -eq 1 ] && grep -q "data check .*, 0 wrong)" "$work/$name.log"
  result $? "fold/$name-folding-said-once-verify-0-wrong ($folds)" "$(grep -E 'folded|data check' "$work/$name.log")"
  wrong=""
  for rank in 0 1 2 3 4 5 6 7; do
    got=$(ops_of "$work/$name.log" "$rank")
    [ "$got" = "$2" ] || wrong="$wrong rank $rank: $got;"
  done
  [ -z "$wrong" ]
  result $? "fold/$name-every-rank-runs-$2-ops" "$wrong"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
