#!/usr/bin/env bash
# A shared fabric on the namespace bed (tests/multihost/netns_bed.sh, 2 hosts x 1 fabric NIC r0):
# `phynet --jobs` refuses a job file naming a host that does not exist (file, line, key); the
# ring-heavy data-parallel trace and the all-to-all-heavy MoE trace run alone then together on one
# host pair whose link tc (tbf) limits to 200 Mbit/s: the limit makes the DP job at least 3x slower
# than unlimited (the link is the bottleneck, not the CPUs), each job is slower shared than alone,
# every job's per-NIC bytes equal its model and the veth counters equal the reports' sum within
# the TCP/IP header bound; background flows (phynet_flow) of 100 Mbit/s each way: the DP replay's
# busbw shared / alone is what the link has left (1 - flow rate / 200 Mbit/s) within 15 %. A fault: r0 of host 2 down
# during a replay with --timeout 4: the run ends within the timeout (+ launch slack) naming the
# host and NIC (no hang). Skips visibly when namespaces cannot be made. Ends "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$PWD/$BUILD/phynet"
bed=tests/multihost/netns_bed.sh
check=tests/multihost/jobs_check.py
work=$(mktemp -d /tmp/fabric-XXXXXX)
source tests/lib/checks.sh  # result(), passed, failed
trap 'bash "$bed" down; [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT

[ -x "$phynet" ] || { echo "missing $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
if ! bash "$bed" up 2 1 >"$work/bed.log" 2>&1; then
  echo "SKIP fabric: cannot create network namespaces here: $(tail -2 "$work/bed.log")"
  echo "0 passed, 0 failed"
  exit 0
fi
mpi=(--allow-run-as-root --mca plm_rsh_agent "$PWD/$bed agent" --mca oob_tcp_if_include 10.99.0.0/24
     --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include 10.99.0.0/24)

# job_file <file> <jobs (TOML text)>: the bed's hosts and launcher, then the jobs.
job_file() {
  local quoted="" a
  for a in timeout 200 mpirun "${mpi[@]}"; do quoted+="${quoted:+, }\"$a\""; done
  cat >"$1" <<TOML
launcher = [$quoted]
exec = ["bash", "$PWD/$bed", "agent"]
timeout_s = 60
launch_s = 2
share_nics = true
[hosts.h1]
address = "10.99.0.1"
nics = { r0 = "10.100.1.1" }
[hosts.h2]
address = "10.99.0.2"
nics = { r0 = "10.100.2.1" }
$2
TOML
}
dp_job='[[job]]
name = "dp"
input = "'"$PWD"'/examples/traces/megatron_dp2"
hosts = ["h1", "h2"]
nics = ["r0"]
args = ["--verify"]'
moe_job='[[job]]
name = "moe"
input = "'"$PWD"'/examples/traces/megatron_moe_tp2_dp2_ep2"
hosts = ["h1", "h2"]
ranks_per_host = 2
nics = ["r0"]
args = ["--verify"]'
# Each direction of the limited link half taken.
background='[[job]]
name = "load12"
kind = "background"
hosts = ["h1", "h2"]
nics = ["r0"]
rate_mbit = 100
port = 47001
[[job]]
name = "load21"
kind = "background"
hosts = ["h2", "h1"]
nics = ["r0"]
rate_mbit = 100
port = 47002'

# 1. Bad input: a job on a host the file does not list.
job_file "$work/bad.toml" "${dp_job/\"h2\"/\"h9\"}"
"$phynet" --jobs "$work/bad.toml" --out "$work/bad" >"$work/bad.log" 2>&1
rc=$?
grep -q "bad.toml:15: key 'hosts': no host 'h9' in \[hosts\]" "$work/bad.log" && [ $rc -eq 2 ]
result $? "jobs/refuses-unknown-host" "rc $rc: $(cat "$work/bad.log")"

# 2. Unlimited, then the link limited to 200 Mbit/s each way (tbf on the host-side veths).
job_file "$work/two.toml" "$dp_job
$moe_job"
"$phynet" --jobs "$work/two.toml" --out "$work/free" >"$work/free.log" 2>&1
result $? "jobs/unlimited-exit-0" "$(tail -5 "$work/free.log")"
for v in nsbed1r0 nsbed2r0; do tc qdisc add dev "$v" root tbf rate 200mbit burst 64kb latency 50ms; done
bash "$bed" counters >"$work/before"
"$phynet" --jobs "$work/two.toml" --out "$work/limited" >"$work/limited.log" 2>&1
rc=$?
bash "$bed" counters >"$work/after"
cat "$work/limited.log"
result $rc "jobs/limited-exit-0" "$(tail -5 "$work/limited.log")"
[ "$(grep -h "^# data check .*, 0 wrong)" "$work"/limited/*.log | wc -l)" -eq 4 ]
result $? "jobs/limited-verify-0-wrong" "$(grep -h '^# data check' "$work"/limited/*.log)"
python3 - "$work" <<'PY'
import json, sys
t = lambda p: json.load(open(f"{sys.argv[1]}/{p}"))["end_to_end_s"]
free, limited = t("free/dp.alone.json"), t("limited/dp.alone.json")
print(f"dp alone: unlimited {free * 1e3:.1f} ms, 200 Mbit/s {limited * 1e3:.1f} ms ({limited / free:.1f}x)")
assert limited > 3 * free
PY
result $? "jobs/the-link-is-the-bottleneck"
grep -A3 "^# job dp" "$work/limited.log" | grep -q "slowdown" && grep -A3 "^# job moe" "$work/limited.log" | grep -q "slowdown"
result $? "jobs/report-has-slowdowns" "$(cat "$work/limited.log")"
python3 "$check" busbw "$work/limited" dp 0.1 0.95 && python3 "$check" busbw "$work/limited" moe 0.1 0.95
result $? "jobs/both-slower-shared"
python3 "$check" bytes "$work/limited" "$work/before" "$work/after"
result $? "jobs/bytes-equal-model-and-veth-counters"

# 3. Background flows of 100 Mbit/s each way on the 200 Mbit/s link: DP gets what they leave.
job_file "$work/bg.toml" "${dp_job/--verify/--iterations\", \"3}
$background"
"$phynet" --jobs "$work/bg.toml" --out "$work/bg" >"$work/bg.log" 2>&1
result $? "background/exit-0" "$(tail -5 "$work/bg.log")"
python3 "$check" left "$work/bg" dp 200 0.15
result $? "background/busbw-what-the-link-has-left" "$(cat "$work"/bg/*.send.log)"
tc qdisc del dev nsbed1r0 root; tc qdisc del dev nsbed2r0 root

# 4. 2 % loss into host 2 (nftables numgen), then r0 of host 2 down for 100 ms, mid-replay: the
# run completes, 0 wrong, and the report names the slow ops with their host pair.
ip netns exec nsbed2 nft -f - <<'NFT' 2>"$work/nft.err"
table inet fabric_loss {
  chain input { type filter hook input priority 0; iifname "r0" numgen random mod 100 < 2 drop; }
}
NFT
result $? "fault/loss-rule-installed" "$(cat "$work/nft.err") (nftables: scripts/setup.sh --tests)"
# Takes DEV down once MB more megabytes crossed it (the replay is running, whatever its launch took),
# and up again after SECONDS (none: it stays down). Gives up after 30 s.
down_after_traffic() {
  local dev=$1 mb=$2 up_after=${3:-} stats=/sys/class/net/$1/statistics/tx_bytes
  local base; base=$(cat "$stats")
  for ((i = 0; i < 600; i++)); do
    (( $(cat "$stats") - base > mb * 1000000 )) && break
    sleep 0.05
  done
  ip link set "$dev" down
  [ -n "$up_after" ] && { sleep "$up_after"; ip link set "$dev" up; }
  return 0
}
down_after_traffic nsbed2r0 20 0.1 &
blip=$!
timeout 60 mpirun "${mpi[@]}" --host 10.99.0.1:1,10.99.0.2:1 -np 2 -x NCCLSHIM_SOCKET_IFNAME=r0 "$phynet" \
  --timeout 10 --verify --iterations 40 examples/traces/megatron_dp2 >"$work/lossy.log" 2>&1
rc=$?
wait "$blip"
ip netns exec nsbed2 nft delete table inet fabric_loss 2>/dev/null
drops=$(ip netns exec nsbed2 nstat -az TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ {print $2}')
echo "lossy run: rc $rc, host 2 TCP retransmitted segments ${drops:-?}"
[ $rc -eq 0 ] && grep -q "^# data check .*, 0 wrong)" "$work/lossy.log"
result $? "fault/loss-and-100ms-down-complete-0-wrong" \
  "$(grep -m4 -E "phynet: rank|replay failed|timed out" "$work/lossy.log" | cut -c1-600; tail -3 "$work/lossy.log")"
# The report names the ops that suffered (retransmissions, the blip) and the host pair they crossed.
grep -Eq "^# slow operations    : [1-9][0-9]* over" "$work/lossy.log" &&
  grep -A1 "^# slow operations" "$work/lossy.log" | grep -Eq "x the median .* us; hosts [^ ]+ - [^ ]+$"
result $? "fault/loss-report-names-slow-ops-and-host-pair" "$(grep -A3 '^# slow operations' "$work/lossy.log")"

# 5. Host 2's r0 down for good mid-replay, --timeout 4: ends in time naming the host and NIC.
down_after_traffic nsbed2r0 20 &
downer=$!
start=$(date +%s)
timeout 60 mpirun "${mpi[@]}" --host 10.99.0.1:1,10.99.0.2:1 -np 2 -x NCCLSHIM_SOCKET_IFNAME=r0 "$phynet" \
  --timeout 4 --iterations 100000 examples/traces/megatron_dp2 >"$work/down.log" 2>&1
rc=$?
took=$(($(date +%s) - start))
wait "$downer"
ip link set nsbed2r0 up
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$took" -le 20 ]
result $? "fault/link-down-ends-in-time" "rc $rc after ${took}s: $(tail -5 "$work/down.log")"
grep -q "timed out after 4.0 s waiting for rank" "$work/down.log" &&
  grep -Eq "on the fabric: global rank [01] on host [^ ]+ NIC r0 \([0-9.]+\), global rank [01] on host [^ ]+ NIC r0 \([0-9.]+\): host pair [^ ]+ - [^ ]+" "$work/down.log"
result $? "fault/link-down-names-the-peer-host-pair-and-nics" "$(tail -5 "$work/down.log")"

echo "$passed passed, $failed failed"
