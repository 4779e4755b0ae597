#!/usr/bin/env bash
# Several hosts over TCP: 4 network namespaces as hosts, each with a management NIC for MPI and two
# fabric NICs (rails r0, r1) (tests/multihost/netns_bed.sh), mpirun launching into them through an
# rsh agent that enters the namespace. Asserts: the bundled Megatron trace (2 hosts x 1 rank) and the
# SimAI and AICB example workloads (4 hosts x 2 ranks, 2 hosts x 4 ranks) replay with --verify,
# 0 wrong; every rank uses NIC r<local rank mod 2>; the hosts are told apart although they share a
# hostname, and NCCLSHIM_HOSTID overrides that; the bytes each fabric veth carried (kernel counters)
# lie within the bound tests/multihost/check_nic_counters.py derives from TCP/IP overhead around the
# report's per-NIC figures, which equal the model; a NIC missing on one host ends every rank at once
# with a message naming that host and NIC; with --intra-node shm the hops within a host go over
# shared memory and the veths still carry exactly what the report says, and host 1's kernel lists
# TCP connections from its ranks to other hosts only (ss; with --intra-node net, within it too).
# The GPU-free shim (ncclshim perf under mpirun, ranks round robin over the hosts) finds the hosts,
# runs node-major rings with the hops inside a host on shared memory: the veths carry the 4 hops
# between hosts and lo nothing (and with NCCLSHIM_INTRA_NODE=net lo carries the other 4).
# NCCL's own ground truth
# (tests/data/nccl_4x2, NCCL on 4 nodes x 2 GPUs) replayed on 4 hosts x 2 ranks with --intra-node shm
# and rings (the ring allreduce and the alltoall run): --verify 0 wrong; for every ordered pair of
# ranks on different hosts phynet's bytes are NCCL's within 1% and pairs NCCL left empty stay empty
# (tests/multihost/nccl_pair_bytes.py); the allreduce's pairs between hosts are exactly NCCL's ring
# connections in topology.txt (1->2, 3->4, 5->6, 7->0); each host's veth counters are the report's
# traffic to other hosts and stay below half-way to the flat model's, which would add the traffic
# between the host's own ranks. Skips visibly (and passes nothing) when namespaces cannot be made
# (not root). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
bed=tests/multihost/netns_bed.sh
work=$(mktemp -d /tmp/multihost-tcp-XXXXXX)
source tests/lib/checks.sh  # result(), passed, failed
# KEEP_WORK=1 keeps the logs and reports for a look after the run.
trap 'bash "$bed" down; [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT

[ -x "$phynet" ] || { echo "missing $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
if ! bash "$bed" up 4 2 >"$work/bed.log" 2>&1; then
  echo "SKIP multihost-tcp: cannot create network namespaces here: $(tail -2 "$work/bed.log")"
  echo "0 passed, 0 failed"
  exit 0
fi

# hosts_arg <hosts> <ranks per host> -> "10.99.0.1:R,10.99.0.2:R,..."
hosts_arg() { local h list=""; for ((h = 1; h <= $1; h++)); do list+="${list:+,}10.99.0.$h:$2"; done; echo "$list"; }

# run <hosts> <ranks per host> <log> <extra mpirun args (one string)> <phynet args...>
run() {
  local hosts=$1 per=$2 log=$3 extra=$4; shift 4
  # shellcheck disable=SC2086
  timeout 300 mpirun --allow-run-as-root --host "$(hosts_arg "$hosts" "$per")" -np $((hosts * per)) \
    --mca plm_rsh_agent "$PWD/$bed agent" --mca oob_tcp_if_include 10.99.0.0/24 --mca pml ob1 \
    --mca btl self,tcp --mca btl_tcp_if_include 10.99.0.0/24 -x NCCLSHIM_SOCKET_IFNAME=r0,r1 $extra \
    "$PWD/$phynet" --timeout 60 "$@" >"$log" 2>&1
}

# replay_checked <name> <hosts> <per host> <input> [phynet args...]: --verify replay, counters around
# it, the checks. Set for one call: NIC_CHECK_ARGS (more check_nic_counters.py arguments).
replay_checked() {
  local name=$1 hosts=$2 per=$3 input=$4 log="$work/$1.log" json="$work/$1.json"
  shift 4
  bash "$bed" counters >"$work/$name.before"
  run "$hosts" "$per" "$log" "" --verify --json "$json" "$@" "$input"
  local rc=$?
  bash "$bed" counters >"$work/$name.after"
  result "$rc" "$name/exit-0" "$(tail -5 "$log")"
  grep -q "^# data check .*, 0 wrong)" "$log"
  result $? "$name/verify-0-wrong" "$(grep '^# data check' "$log")"
  python3 - "$json" "$hosts" "$per" <<'PY'
import json, sys
report, hosts, per = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
ranks = report["ranks"]
assert report["hosts"] == hosts, f"report sees {report['hosts']} hosts, want {hosts}"
assert len({r["host_id"] for r in ranks}) == hosts, "host identities do not tell the namespaces apart"
for r in ranks:
    want_nic = f"r{r['local_rank'] % 2}"
    assert r["local_rank"] == r["rank"] % per, f"rank {r['rank']}: local rank {r['local_rank']}"
    assert r["nic"] == want_nic, f"rank {r['rank']} (local {r['local_rank']}) uses {r['nic']}, want {want_nic}"
    assert r["address"] == f"10.100.{r['rank'] // per + 1}.{r['local_rank'] % 2 + 1}", r
print("placement ok:", [(r["rank"], r["host"], r["nic"]) for r in ranks])
PY
  result $? "$name/hosts-and-one-nic-per-rank" "$(tail -3 "$work/$name.log")"
  # shellcheck disable=SC2086
  python3 tests/multihost/check_nic_counters.py "$json" "$work/$name.before" "$work/$name.after" \
    ${NIC_CHECK_ARGS:-} >"$work/$name.counters" 2>&1
  result $? "$name/veth-counters-match-report" "$(cat "$work/$name.counters")"
  sed 's/^/    /' "$work/$name.counters"
}

replay_checked megatron-2x1 2 1 examples/traces/megatron_tp2
replay_checked simai-4x2 4 2 examples/workloads/simai_tp2_dp4_ep2.txt --intra-node net
replay_checked aicb-4x2 4 2 examples/workloads/aicb_tp2_dp4_ep2.csv --intra-node net
replay_checked simai-2x4 2 4 examples/workloads/simai_tp2_dp4_ep2.txt --intra-node net

# Tensor parallelism stays inside a host: the report puts TP pairs on "same host" rows.
python3 - "$work/simai-4x2.json" <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))["host_pairs"]
same = [p for p in pairs if p["same_host"]]
assert len(same) == 4 and all(p["traffic"]["bytes"] > 0 for p in same), same
PY
result $? "simai-4x2/tp-traffic-stays-in-hosts"

# The default on several hosts (--intra-node auto = shm): the ranks of a host are a node; their hops
# go over shared memory (16 bytes of framing per message), those between hosts over TCP (24), and
# the veths carry what the report says.
replay_checked aicb-4x2-shm 4 2 examples/workloads/aicb_tp2_dp4_ep2.csv
python3 - "$work/aicb-4x2-shm.json" <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))["host_pairs"]
for p in pairs:
    t = p["traffic"]
    if t["messages"]:
        framing = (t["wire_bytes"] - t["bytes"]) / t["messages"]
        assert framing == (16 if p["same_host"] else 24), (p, framing)
assert sum(p["traffic"]["bytes"] for p in pairs if p["same_host"]) > 0, pairs
PY
result $? "aicb-4x2-shm/host-hops-on-shm-fabric-hops-on-tcp"

# TCP connections between the ranks, as host 1's kernel lists them while a replay runs: with
# --intra-node shm only pairs between hosts (NCCL's net transport connects no pair of one node);
# with --intra-node net the two ranks of the host are connected too (the check can fail).
# tcp_pairs_seen <mode>: writes "<within host> <between hosts>" connection counts to $work/ss-<mode>.
tcp_pairs_seen() {
  local mode=$1 log="$work/ss-$1.log" t seen="- -" iterations
  # A progress line (every 2 s of replay) means the bootstrap, whose root connections are gone
  # once every rank is connected, is over; a machine fast enough to finish first gets a longer run.
  for iterations in 60 240 960; do
    run 4 2 "$log" "" --intra-node "$mode" --iterations "$iterations" examples/workloads/simai_tp2_dp4_ep2.txt &
    local pid=$!
    for t in $(seq 1 600); do
      grep -q "phynet: progress:" "$log" 2>/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if grep -q "phynet: progress:" "$log" && kill -0 "$pid" 2>/dev/null; then
      seen=$(bash "$bed" agent 10.99.0.1 ss -Htn state established 2>/dev/null | awk '
        { split($3, a, ":"); split($4, b, ":") }
        a[1] ~ /^10\.100\.1\./ && b[1] ~ /^10\.100\./ { if (b[1] ~ /^10\.100\.1\./) within++; else between++ }
        END { print within + 0, between + 0 }')
    fi
    wait "$pid" || { seen="- -"; break; }  # a failed replay proves nothing
    [ "$seen" != "- -" ] && break
  done
  echo "$seen" >"$work/ss-$mode"
}
tcp_pairs_seen shm
tcp_pairs_seen net
read -r shm_within shm_between <"$work/ss-shm"
read -r net_within net_between <"$work/ss-net"
echo "    host 1's TCP connections from its fabric addresses: --intra-node shm: $shm_within within the host," \
  "$shm_between to other hosts; --intra-node net: $net_within within, $net_between to others"
[ "$shm_within" = 0 ] && [ "$shm_between" != - ] && [ "$shm_between" -gt 0 ] && [ "$net_within" != - ] &&
  [ "$net_within" -gt 0 ]
result $? "simai-4x2/tcp-connects-only-pairs-between-hosts-with-shm" \
  "shm: $shm_within within, $shm_between between; net: $net_within within, $net_between between"

# NCCL's own ground truth (tests/data/nccl_4x2: NCCL 2.28.9 on 4 nodes x 2 GPUs) on 4 real hosts x 2
# ranks, --intra-node shm, NCCL's algorithm and channels per call as recorded: the ring allreduce,
# the forced-Tree allreduce and the alltoall run. Bytes and connections between ranks of different
# hosts as NCCL's; the allreduces' hops between hosts are NCCL's ring / tree connections
# (topology.txt); the veths carry only what goes between hosts and not the traffic
# inside a host that the flat model would put on them (check_nic_counters.py --intra-host-off-fabric).
# TCP between two ranks of one namespace would take its lo, not a veth: that the hops inside a host
# went over shared memory is the 16-byte framing nccl_pair_bytes.py checks.
nccl=tests/data/nccl_4x2
mkdir -p "$work/nccl"
tar -xzf "$nccl/traces.tgz" -C "$work/nccl" topo-all_reduce-n4x2 topo-all_reduce-n4x2-Tree topo-alltoall-n4x2
for run in topo-all_reduce-n4x2 topo-all_reduce-n4x2-Tree topo-alltoall-n4x2; do
  shape=()
  [[ $run == *all_reduce* ]] && shape=(--ring-hops "$nccl/topology.txt" --algorithms)
  NIC_CHECK_ARGS=--intra-host-off-fabric replay_checked "nccl-$run" 4 2 "$work/nccl/$run" --intra-node shm --rows 0
  python3 tests/multihost/nccl_pair_bytes.py "$nccl/bytes_per_pair.csv" "$run" "$work/nccl-$run.json" 2 \
    --flows "${shape[@]}" >"$work/nccl-$run.cmp" 2>&1
  result $? "nccl-$run/bytes-and-connections-between-hosts-as-NCCL" "$(cat "$work/nccl-$run.cmp")"
  sed 's/^/    /' "$work/nccl-$run.cmp"
done

# The GPU-free shim across hosts (libshim/comm_factory.cc): ncclshim perf's 4 MiB allreduce on 4
# hosts x 2 ranks placed round robin (rank r on host r mod 4), out of place and in place, each 2
# warmup + 8 timed + 1 checked call (22 allreduces, every element checked: 0 wrong). The
# communicator finds the hosts, so its rings are node-major (per channel one hop into and one out of
# each host) and NCCL's tuner picks the ring in Simple; the ranks of a host meet over shared memory.
# Kernel counters: the fabric veths carry the 4 hops between hosts, 2(n-1)/n x 4 MiB each per op,
# within TCP/IP overhead (a flat ring would cross hosts at all 8 hops: twice that), and the hosts'
# lo (TCP between ranks of one namespace) next to nothing; with NCCLSHIM_INTRA_NODE=net the 4 hops
# inside the hosts go over TCP on lo (the check can fail).
lo_bytes() { local h t=0; for h in 1 2 3 4; do t=$((t + $(ip netns exec nsbed$h cat /sys/class/net/lo/statistics/tx_bytes))); done; echo $t; }
shim_perf_checked() {  # shim_perf_checked <name> <NCCLSHIM_INTRA_NODE> <lo: off|on>
  local name=$1 intra=$2 lo=$3 rc
  bash "$bed" counters >"$work/$name.before"
  local lo_before; lo_before=$(lo_bytes)
  timeout 300 mpirun --allow-run-as-root --host "$(hosts_arg 4 2)" -np 8 --map-by node \
    --mca plm_rsh_agent "$PWD/$bed agent" --mca oob_tcp_if_include 10.99.0.0/24 --mca pml ob1 \
    --mca btl self,tcp --mca btl_tcp_if_include 10.99.0.0/24 -x NCCLSHIM_SOCKET_IFNAME=r0,r1 \
    -x NCCLSHIM_MODE=gpufree -x NCCLSHIM_INTRA_NODE="$intra" -x NCCLSHIM_DEBUG=INFO \
    "$PWD/$BUILD/ncclshim" perf all_reduce -b 4M -e 4M -w 2 -n 8 --id-file "$work/$name.id" >"$work/$name.log" 2>&1
  rc=$?
  bash "$bed" counters >"$work/$name.after"
  local lo_after; lo_after=$(lo_bytes)
  result "$rc" "$name/exit-0" "$(tail -5 "$work/$name.log")"
  grep -q "^# Out of bounds values : 0 OK" "$work/$name.log"
  result $? "$name/every-element-right" "$(grep -m1 'Out of bounds' "$work/$name.log")"
  grep -q "rank 0 of 8: 4 node(s), 2 rank(s) on this one" "$work/$name.log"
  result $? "$name/four-hosts-of-two-found" "$(grep -m2 'node(s)' "$work/$name.log")"
  python3 - "$work/$name.before" "$work/$name.after" "$((lo_after - lo_before))" "$lo" <<'PY' >"$work/$name.counters" 2>&1
import sys
def read(path):
    return {(l.split()[0], l.split()[1]): int(l.split()[2]) for l in open(path) if l.strip()}
before, after = read(sys.argv[1]), read(sys.argv[2])
fabric = sum(after[k] - before.get(k, 0) for k in after)  # what the namespaces sent on their fabric NICs
lo, want_lo = int(sys.argv[3]), sys.argv[4]
ops, size, n = 22, 4 << 20, 8
hop = 2 * (n - 1) * size // n
model = 4 * hop * ops  # node-major ring: 4 hops between hosts
print(f"fabric veths: {fabric} B; model (4 hops between hosts x {hop} B x {ops} ops): {model} B; ratio {fabric / model:.3f}")
print(f"lo of the 4 hosts: {lo} B ({lo / model:.3f} of the model; the 4 hops inside hosts would be {model} B)")
ok = 1.0 <= fabric / model <= 1.10
ok = ok and (lo < 0.01 * model if want_lo == "off" else 1.0 <= lo / model <= 1.15)
sys.exit(0 if ok else 1)
PY
  result $? "$name/kernel-counters-node-major-ring-$lo-lo" "$(cat "$work/$name.counters")"
  sed 's/^/    /' "$work/$name.counters"
}
shim_perf_checked shim-perf-4x2-shm auto off
shim_perf_checked shim-perf-4x2-net net on

# NCCLSHIM_HOSTID overrides the identity: one name for all makes them one host to phynet.
run 4 2 "$work/hostid.log" "-x NCCLSHIM_HOSTID=onehost" --json "$work/hostid.json" examples/workloads/simai_tp2_dp4_ep2.txt
python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))
assert r['hosts'] == 1 and all(x['host'] == 'onehost' for x in r['ranks']), r['hosts']" "$work/hostid.json"
result $? "hostid-override-is-one-host" "$(tail -3 "$work/hostid.log")"

# A NIC that one host lacks: the rank there names its host and NIC, every rank ends at once.
ip netns exec nsbed3 ip link set r1 down
start=$SECONDS
run 4 2 "$work/missing.log" "" examples/workloads/simai_tp2_dp4_ep2.txt
rc=$?
elapsed=$((SECONDS - start))
ip netns exec nsbed3 ip link set r1 up
[ "$rc" -ne 0 ] && grep -q "rank 5: no usable NIC: host vm#3\|rank 5: no usable NIC: host [^ ]*#3, local rank 1: socket interface 'r1'" "$work/missing.log" \
  && [ "$elapsed" -lt 60 ]
result $? "missing-nic-named-on-its-host-all-end" "rc $rc after ${elapsed}s: $(grep -m3 'phynet' "$work/missing.log"); last lines: $(tail -4 "$work/missing.log")"
grep "no usable NIC" "$work/missing.log" | sed 's/^/    /'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
