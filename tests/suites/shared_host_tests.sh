#!/usr/bin/env bash
# Safe on a shared host, loud when it loses data (issue 39). Root runs the jobs; a second local user
# (nobody, through setpriv) is the attacker. Each check asserts the outcome:
#   trace/*  a captured NCCL program (capture_until_killed under LD_PRELOAD=libncclshim.so, GPU-free)
#            records into a shared 0777 directory where nobody planted, at the names the recorder
#            will use (its pid is known before it starts), a symlink to a root-owned file and a
#            0666 file of its own: the root file and nobody's file are unchanged, the trace is in a
#            new ".1" file of root's, mode 0600 (nobody cannot read it), whole (footer, every call),
#            and the log names the names it did not take.
#   id/*     `ncclshim perf` under mpirun without --id-file: the unique id's file lies in a 0700
#            directory of root's that nobody cannot read, and is gone after the run; a directory
#            nobody made at that place is refused at once with a message naming it and its owner
#            (and a symlink nobody planted at the old /tmp name is left alone); with --id-file in a
#            shared directory where nobody planted a fake id first, rank 1 ignores it (saying why)
#            and the job completes on rank 0's id.
#   lost/*   the captured program records onto a 64 KiB tmpfs (disk full): one warning at once
#            naming the file and "No space left on device", one at exit with the count of lost
#            records, which with the complete lines in the file makes every record; the job still
#            exits 0; `ncclshim-trace validate` names the cut (file, line, bytes); the same when SIGTERM
#            ends the program (the signal handler's drain warns and counts). On a read-only
#            tmpfs (a trace directory that cannot be written) the same two warnings, every record lost.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
perf="$BUILD/ncclshim"
trace_tool="$BUILD/ncclshim-trace"
lib=$(realpath "$BUILD/libncclshim.so" 2>/dev/null)
program="$BUILD/faults/capture_until_killed"
work=$(mktemp -d /tmp/shared-host-tests-XXXXXX)
mounts=()
cleanup() {
  local pid m
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null; done
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -f /tmp/ncclshim-perf-"${old_name_pid:-none}".id*  # what nobody planted at the old id name
  rm -rf "$work"
}
trap cleanup EXIT

source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/capture_program.sh  # build_capture_program

for f in "$perf" "$trace_tool" "$BUILD/libncclshim.so" "$BUILD/tests/stub/libnccl.so.2" "$BUILD/nccl_cflags.txt"; do
  [ -e "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done
build_capture_program

chmod 755 "$work"  # nobody may enter it, and write only in the shared folders below
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
host=$(hostname | tr '/ ' '__')
echo "precious root data" >"$work/precious"
mpi=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo)

# start_held <out> <command...>: starts the command in a subshell that waits for "$work/go" and
# then execs it (keeping the pid, so the names derived from it are known beforehand); sets held_pid.
start_held() {
  local out=$1
  shift
  rm -f "$work/go"
  ( while [ ! -e "$work/go" ]; do sleep 0.02; done; exec "$@" ) >"$out.out" 2>"$out.err" &
  held_pid=$!
}
release_held() { touch "$work/go"; }
complete_records() { grep -c '"type":"\(op\|comm\)"' "$1"; }

# ---- trace: planted symlink and file at the recorder's names in a shared directory
shared="$work/shared"
mkdir -m 777 "$shared" && chmod 777 "$shared"  # world-writable, not sticky (kernel link protection off)
start_held "$work/planted" env NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$shared" LD_PRELOAD="$lib" "$program" 20 exit
first="$shared/ncclshim-$host-$held_pid.jsonl.part"    # the name while written, before the rank is known
renamed="$shared/ncclshim-$host-$held_pid-rank0.jsonl"  # the final name, the rank known
as_nobody ln -s "$work/precious" "$first"
as_nobody sh -c "umask 0; echo planted >'$renamed'"
release_held
wait "$held_pid"
rc=$?
traces=$(find "$shared" -maxdepth 1 -type f -user root -name '*.jsonl')
trace=$(echo "$traces" | head -1)
[ "$rc" -eq 0 ] && [ "$(cat "$work/precious")" = "precious root data" ] && [ "$(cat "$renamed")" = planted ] &&
  [ "$(stat -c %U "$renamed")" = nobody ] && [ "$trace" = "$shared/ncclshim-$host-$held_pid-rank0.1.jsonl" ] &&
  [ "$(complete_records "$trace")" -eq 22 ] && tail -n 1 "$trace" | grep -q '"type":"footer"'
result $? "trace/planted-symlink-and-file-left-alone-trace-whole-in-a-new-file" \
  "rc $rc, precious '$(cat "$work/precious" | head -c 80)', planted '$(head -c 80 "$renamed")', traces: $traces; $(tail -n 3 "$work/planted.err")"
grep -q "$first exists (not replaced, not followed); writing $shared/ncclshim-$host-$held_pid.jsonl.1.part" "$work/planted.err" &&
  grep -q "$renamed exists (not replaced, not followed); writing $trace" "$work/planted.err"
result $? "trace/the-log-names-both-names-not-taken" "$(cat "$work/planted.err" | head -5)"
[ -n "$trace" ] && [ "$(stat -c %a "$trace")" = 600 ] && ! as_nobody cat "$trace" >/dev/null 2>&1
result $? "trace/file-is-0600-nobody-cannot-read-it" "mode $(stat -c %a "${trace:-/nonexistent}" 2>&1)"

# ---- id: the unique id's file under mpirun, private, removed after the run
unset XDG_RUNTIME_DIR  # the private directory under TMPDIR, where this test looks
mkdir -m 1777 "$work/tmp" && chmod 1777 "$work/tmp"
export TMPDIR="$work/tmp"
start_held "$work/id" "${mpi[@]}" -np 2 "$perf" perf all_reduce -b 1K -e 1K -n 60000 -w 0 -c 0
release_held
idfile=""
for _ in $(seq 1 1000); do  # up to 20 s: mpirun starts, rank 0 writes the id
  idfile=$(ls /tmp/ncclshim-perf-"$held_pid".id "$TMPDIR"/ncclshim-0/ncclshim-perf-"$held_pid"*.id 2>/dev/null | head -1)
  [ -n "$idfile" ] && break
  sleep 0.02
done
read_by_nobody=$( [ -n "$idfile" ] && as_nobody cat "$idfile" 2>/dev/null | head -c 16)
id_mode=$(stat -c %a "${idfile:-/nonexistent}" 2>/dev/null)
dir_mode=$(stat -c '%a %U' "$(dirname "${idfile:-/nonexistent/x}")" 2>/dev/null)
timeout 120 tail --pid="$held_pid" -f /dev/null
wait "$held_pid"
rc=$?
[ -n "$idfile" ] && [ -z "$read_by_nobody" ] && [ "$id_mode" = 600 ] && [ "$dir_mode" = "700 root" ]
result $? "id/file-in-a-0700-dir-of-root-nobody-cannot-read-it" \
  "file ${idfile:-none} (mode $id_mode, dir $dir_mode), nobody read '${read_by_nobody}'"
[ "$rc" -eq 0 ] && [ -n "$idfile" ] && [ ! -e "$idfile" ] && grep -q "Avg bus bandwidth" "$work/id.out"
result $? "id/job-completes-and-the-file-is-removed" "rc $rc, $(tail -n 3 "$work/id.err")"

# A directory nobody made where root's private one goes, and a symlink at the old /tmp name.
rm -rf "$TMPDIR/ncclshim-0"  # root's own, from the run above
as_nobody mkdir -m 777 "$TMPDIR/ncclshim-0"
start_held "$work/squat" timeout 90 "${mpi[@]}" -np 2 "$perf" perf all_reduce -b 1K -e 1K -n 5 -w 0 -c 0
old_name_pid=$held_pid
as_nobody ln -s "$work/precious" "/tmp/ncclshim-perf-$held_pid.id.tmp"
as_nobody ln -s "$work/precious" "/tmp/ncclshim-perf-$held_pid.id"
started=$SECONDS
release_held
wait "$held_pid"
rc=$?
[ "$rc" -ne 0 ] && [ $((SECONDS - started)) -le 30 ] && [ "$(cat "$work/precious")" = "precious root data" ] &&
  grep -q "refusing $TMPDIR/ncclshim-0 for the unique id: it is owned by uid 65534, not by you (uid 0); remove it, or use --id-file" "$work/squat.err"
result $? "id/directory-made-by-nobody-refused-naming-it-and-its-owner" \
  "rc $rc after $((SECONDS - started)) s, precious '$(head -c 80 "$work/precious")': $(tail -n 3 "$work/squat.err")"
rm -rf "$TMPDIR/ncclshim-0"

# --id-file in a shared directory where nobody put a fake id first: rank 1 starts alone and waits.
as_nobody sh -c "umask 0; printf '%0256d\n' 0 | tr 0 a >'$shared/job.id'"
for r in 1 0; do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 NCCLSHIM_TIMEOUT=20 timeout 60 \
    "$perf" perf all_reduce --id-file "$shared/job.id" -b 1K -e 4K -n 5 -w 1 -c 1 >"$work/fake$r.log" 2>&1 &
  eval "fake_pid_$r=$!"
  [ "$r" -eq 1 ] && sleep 1  # rank 1 sees only nobody's file for a second
done
wait "$fake_pid_0"
rc0=$?
wait "$fake_pid_1"
rc1=$?
[ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ] &&
  grep -q "rank 1: ignoring $shared/job.id: it is owned by uid 65534, not by you (uid 0); waiting for rank 0's own" "$work/fake1.log"
result $? "id/fake-id-file-of-nobody-ignored-job-runs-on-rank-0s-id" "rc $rc0/$rc1: $(tail -n 3 "$work/fake1.log")"

# ---- lost: disk full (64 KiB tmpfs) and a directory that cannot be written (read-only tmpfs)
calls=2000
records=$((calls + 2))  # the comm's init and destroy, and one op per call
for kind in full readonly; do
  dir="$work/$kind"
  mkdir -p "$dir"
  options=size=64k
  [ "$kind" = readonly ] && options=ro,size=64k
  if ! mount -t tmpfs -o "$options" tmpfs "$dir" 2>"$work/mount.err"; then
    result 1 "lost/$kind-needs-a-tmpfs-mount" "$(cat "$work/mount.err")"
    continue
  fi
  mounts+=("$dir")
  NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$dir" LD_PRELOAD="$lib" "$program" $calls exit >"$work/$kind.out" 2>"$work/$kind.err"
  rc=$?
  trace=$(ls "$dir"/*.jsonl* 2>/dev/null | head -1)  # .part: no footer could be written
  lost=$(sed -n 's/.*trace: \([0-9]*\) records lost: .*/\1/p' "$work/$kind.err")
  if [ "$kind" = full ]; then
    complete=$(head -n "$(wc -l <"$trace")" "$trace" | grep -c '"type":"\(op\|comm\)"')
    lines=$(wc -l <"$trace")
    partial=$(( $(wc -c <"$trace") - $(head -n "$lines" "$trace" | wc -c) ))
    [ "$rc" -eq 0 ] && [ "$(grep -c "trace: cannot write $trace: No space left on device" "$work/$kind.err")" -eq 1 ] &&
      [ -n "$lost" ] && [ "$lost" -gt 0 ] && [ $((lost + complete)) -eq "$records" ] &&
      grep -q "records lost: $trace could not be written (No space left on device)" "$work/$kind.err"
    result $? "lost/disk-full-warned-once-and-at-exit-$lost-lost-plus-$complete-in-the-file-make-$records" \
      "rc $rc, trace $trace: $(cat "$work/$kind.err" | head -4)"
    "$trace_tool" validate "$dir" >"$work/validate.out" 2>&1
    grep -q "$trace: cut at line $((lines + 1)) after $partial bytes (its writer stopped inside that line: killed, or its disk full" "$work/validate.out"
    result $? "lost/validate-names-the-file-the-line-and-the-cut" "$(head -4 "$work/validate.out")"
    # Ended by SIGTERM instead (the writer drains in the signal handler: the warnings written there).
    rm -f "$dir"/*.jsonl*
    NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$dir" LD_PRELOAD="$lib" "$program" $calls >/dev/null 2>"$work/sigterm.err" &
    { wait $!; } 2>/dev/null  # no "Terminated" line from bash
    rc=$?
    trace=$(ls "$dir"/*.jsonl* 2>/dev/null | head -1)  # .part: no footer could be written
    lost=$(sed -n 's/.*trace: \([0-9]*\) records lost: .*/\1/p' "$work/sigterm.err")
    complete=$(head -n "$(wc -l <"$trace")" "$trace" | grep -c '"type":"\(op\|comm\)"')
    [ "$rc" -eq 143 ] && [ "$(grep -c "trace: cannot write $trace: No space left on device" "$work/sigterm.err")" -eq 1 ] &&
      [ -n "$lost" ] && [ $((lost + complete)) -eq $((calls + 1)) ]
    result $? "lost/disk-full-ended-by-sigterm-warned-and-${lost:-?}-counted" "rc $rc: $(head -4 "$work/sigterm.err")"
  else
    [ "$rc" -eq 0 ] && [ -z "$trace" ] &&
      [ "$(grep -c "trace: cannot create $dir/ncclshim-$host-.*: Read-only file system" "$work/$kind.err")" -eq 1 ] &&
      [ "$lost" = "$records" ]
    result $? "lost/unwritable-dir-warned-once-and-all-$records-counted-at-exit" "rc $rc: $(head -4 "$work/$kind.err")"
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
