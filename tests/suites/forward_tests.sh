#!/usr/bin/env bash
# Forward mode of libncclshim.so (libshim/forward_backend.h) and its record hook, against a fake
# "real NCCL" (tests/shim/fake_nccl.c): forward_test_program runs as 2-3 rank processes with
# LD_PRELOAD=libncclshim.so and checks that every call reaches the fake unchanged and its results
# and errors come back; then the ways of finding the real NCCL (RTLD_NEXT, RTLD_NOLOAD under an
# RTLD_LOCAL load as in PyTorch, NCCLSHIM_REAL_NCCL), a missing real NCCL, an older one, auto mode
# without a GPU, and the hook in GPU-free mode. Ends with "N passed, N failed" (one per check line).
# Usage: tests/suites/forward_tests.sh   (after `make`; BUILD=build by default)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
lib=$(realpath "$build/libncclshim.so")
program="$build/tests/forward_test_program"
loader="$build/tests/forward_loader"
linked="$build/tests/libforward_linked.so"
unlinked="$build/tests/libforward_unlinked.so"
fake=$(realpath "$build/tests/fake/libnccl.so.2")
api_program="$build/tests/nccl_api_test_program"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed

for f in "$lib" "$program" "$loader" "$linked" "$unlinked" "$fake" "$build/tests/fake_old/libnccl.so.2"; do
  [ -e "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done

# run_case <case> <nranks> <scenario> <env assignments...> -- <command...>: one process per rank,
# each given "<scenario> <rank> <nranks> <dir>"; their CHECK lines are counted. stderr (the shim's
# INFO log) lands in $work/<case>/err.<rank>.
run_case() {
  local name=$1 n=$2 scenario=$3
  shift 3
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  local dir="$work/$name" pids=() rc=0 r
  mkdir -p "$dir"
  for ((r = 0; r < n; r++)); do
    env FAKE_NCCL_LOG="$dir/fake.$r.log" NCCLSHIM_DEBUG=INFO "${vars[@]/@DIR@/$dir}" LD_PRELOAD="$lib" \
      timeout 120 "$@" "$scenario" "$r" "$n" "$dir" >"$dir/out.$r" 2>"$dir/err.$r" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  local p f
  p=$(cat "$dir"/out.* | grep -c '^CHECK PASS')
  f=$(cat "$dir"/out.* | grep -c '^CHECK FAIL')
  grep -h '^CHECK FAIL' "$dir"/out.* | sed "s/^CHECK /[$name] /"
  echo "$name: $p checks passed, $f failed on $n rank(s)"
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    result 1 "$name/exit-status" "a rank exited non-zero: $(tail -n 3 "$dir"/err.* | tr '\n' ' ')"
  fi
  [ "$p" -gt 0 ] || result 1 "$name/ran" "no checks ran"
}

# logged <case> <pattern> <check name>: every rank's INFO log contains the pattern.
logged() {
  local missing
  missing=$(grep -L -- "$2" "$work/$1"/err.* | tr '\n' ' ')
  result "$([ -z "$missing" ]; echo $?)" "$1/$3" "no '$2' in $missing"
}

# same_ids <case>: every "COMMID <label> <id>" label has one id across the ranks printing it.
same_ids() {
  local bad
  bad=$(cat "$work/$1"/out.* | awk '/^COMMID/ {ids[$2] = ids[$2] " " $3; if (!(($2, $3) in seen)) {seen[$2, $3] = 1; n[$2]++}}
        END {for (l in n) if (n[l] != 1) print l ":" ids[l]}')
  local labels
  labels=$(cat "$work/$1"/out.* | awk '/^COMMID/ {print $2}' | sort -u | tr '\n' ' ')
  result "$([ -z "$bad" ] && [ -n "$labels" ]; echo $?)" "$1/comm-ids-equal-across-ranks" "differ: $bad (labels: $labels)"
}

echo "== forward mode: every call reaches the real NCCL unchanged"
for n in 2 3; do
  run_case "forward-$n" "$n" forward NCCLSHIM_MODE=forward -- "$program"
  logged "forward-$n" "NCCLSHIM_MODE=forward: forwarding to the real NCCL $fake (found by dlsym(RTLD_NEXT))" chosen-and-logged
done

echo "== the record hook in forward mode (NCCLSHIM_HOOK_DEBUG)"
run_case forward-hook-3 3 forward NCCLSHIM_MODE=forward "NCCLSHIM_HOOK_DEBUG=@DIR@/hook.%p.log" -- "$program"
same_ids forward-hook-3
run_case forward-hook-noop-2 2 forward NCCLSHIM_MODE=forward NCCLSHIM_HOOK_DEBUG=noop -- "$program"

echo "== errors of the real NCCL propagate"
run_case fail-2 2 fail NCCLSHIM_MODE=forward FAKE_NCCL_FAIL=ncclAllReduce,ncclCommSplit \
  "NCCLSHIM_HOOK_DEBUG=@DIR@/hook.%p.log" -- "$program"
run_case fail-code-1 1 fail NCCLSHIM_MODE=forward FAKE_NCCL_FAIL=ncclCommSplit,ncclAllReduce FAKE_NCCL_FAIL_CODE=3 \
  -- "$program"

echo "== an older real NCCL lacking functions"
run_case old-1 1 old NCCLSHIM_MODE=forward "LD_LIBRARY_PATH=$build/tests/fake_old" FAKE_NCCL_FAIL=ncclBroadcast \
  -- "$program"
logged old-1 "lacks: ncclCommShrink ncclCommRevoke ncclCommWindowRegister ncclCommWindowDeregister" missing-listed

echo "== finding the real NCCL under an RTLD_LOCAL load (as PyTorch loads it)"
run_case noload-2 2 forward NCCLSHIM_MODE=forward -- "$loader" "$linked"
logged noload-2 "found by dlopen(libnccl.so.2, RTLD_NOLOAD)" found-by-noload
run_case env-path-2 2 forward NCCLSHIM_MODE=forward "NCCLSHIM_REAL_NCCL=$fake" -- "$loader" "$unlinked"
logged env-path-2 "found by dlopen(NCCLSHIM_REAL_NCCL=$fake)" found-by-env-path

echo "== no real NCCL"
run_case nonccl-1 1 nonccl NCCLSHIM_MODE=forward -- "$loader" "$unlinked"
run_case self-1 1 nonccl NCCLSHIM_MODE=forward "NCCLSHIM_REAL_NCCL=$lib" -- "$loader" "$unlinked"
run_case auto-nonccl-1 1 gpufree -- "$loader" "$unlinked"
logged auto-nonccl-1 "NCCLSHIM_MODE=auto: GPU-free (no real NCCL" auto-chose-gpufree

echo "== auto mode without a GPU chooses GPU-free, even with a real NCCL present"
run_case auto-no-gpu-2 2 gpufree CUDA_VISIBLE_DEVICES= -- "$program"
logged auto-no-gpu-2 "NCCLSHIM_MODE=auto: GPU-free (a real NCCL is at $fake, but no GPU" auto-chose-gpufree

echo "== the record hook in GPU-free mode"
if [ -x "$api_program" ]; then
  dir="$work/gpufree-hook"
  mkdir -p "$dir"
  NCCLSHIM_MODE=gpufree NCCLSHIM_HOOK_DEBUG="$dir/hook.%p.log" LD_PRELOAD="$lib" timeout 300 "$api_program" 2 api \
    >"$dir/out" 2>&1
  result $? gpufree-hook/api-scenario-passes "$(tail -n 3 "$dir/out" | tr '\n' ' ')"
  logs=("$dir"/hook.*.log)
  bad=$(cat "${logs[@]}" | grep -vc '^fn=nccl')
  result "$([ "${#logs[@]}" -ge 2 ] && [ "$bad" -eq 0 ]; echo $?)" gpufree-hook/every-rank-reports "${#logs[@]} logs, $bad bad lines"
  unknown=$(cat "${logs[@]}" | grep -E '^fn=nccl(AllReduce|Broadcast|Send|Recv|AllGather|ReduceScatter) result=0 ' |
    grep -c 'commId=0x0 ')
  ops=$(cat "${logs[@]}" | grep -cE '^fn=nccl(AllReduce|Broadcast|Send|Recv|AllGather|ReduceScatter) result=0 ')
  result "$([ "$ops" -gt 0 ] && [ "$unknown" -eq 0 ]; echo $?)" gpufree-hook/ops-carry-comm-ids "$unknown of $ops without"
  first_ids=$(for log in "${logs[@]}"; do grep -m1 '^fn=ncclCommInitRank ' "$log" | sed 's/.* new=[^,]*,\([^,]*\),.*/\1/'; done |
    sort -u | wc -l)
  result "$([ "$first_ids" -eq 1 ]; echo $?)" gpufree-hook/comm-id-equal-on-members "$first_ids distinct ids"
else
  result 1 gpufree-hook/program "missing $api_program"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
