#!/usr/bin/env bash
# Fault tests of the GPU-free shim and the trace tools (run by tests/run_all.sh after `make`); each
# asserts the outcome, not only that something failed:
#   kill/*      SIGKILL of rank 1 of `ncclshim perf -np 4` (the NCCL API on libncclshim.so over TCP)
#               in the middle of a long all_reduce: every other rank exits non-zero within the
#               timeout, and each one's error names rank 1. (A rank of phynet killed mid-replay is
#               tested in tests/suites/phynet_tests.sh, kill/peers-exit-naming-the-lost-rank.)
#   capture/*   tests/faults/programs/capture_until_killed.cc, an NCCL program recording through
#               LD_PRELOAD=libncclshim.so with NCCLSHIM_TRACE_DIR, ends by SIGTERM: raised by itself
#               after exactly N calls (the trace holds exactly N ops), or sent from outside at a
#               random moment (the trace holds every call it reported complete, and at most the one
#               in flight besides); the footer says "signal" 15.
#   cut/*       that trace cut mid-line at several places and at a line end: ncclshim-trace dump
#               keeps every complete record and reports the cut line and its bytes; validate accepts
#               it and says where it was cut.
#   bootstrap/* while the root of a 4-rank job waits for its last rank, raw clients (python3
#               sockets) send a wrong secret, a bad magic, a wrong version, nranks beyond the limit,
#               a rank out of range, a duplicate rank, a 64 KiB blob and a hello that never finishes:
#               each is refused (the wrong secret with an answer saying so; the root logs one
#               summary line of them all), then the last rank joins and the job completes with every element
#               checked. A fake root answering a rank with a table or error length beyond the limits
#               is refused by the rank, which exits at once naming the root.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
perf="$BUILD/ncclshim"
trace_tool="$BUILD/ncclshim-trace"
lib=$(realpath "$BUILD/libncclshim.so" 2>/dev/null)
program="$BUILD/faults/capture_until_killed"
work=$(mktemp -d /tmp/fault-tests-XXXXXX)
cleanup() {
  local pid
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/processes.sh  # wait_for_busy_ranks
source tests/lib/capture_program.sh  # build_capture_program

for f in "$perf" "$trace_tool" "$BUILD/libncclshim.so" "$BUILD/tests/stub/libnccl.so.2" "$BUILD/nccl_cflags.txt"; do
  [ -e "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done

build_capture_program  # the capture program, built when missing or older than its source


# ---- kill: SIGKILL rank 1 of a 4-rank perf in the middle of its all_reduce loop
timeout_s=20
NCCLSHIM_TIMEOUT=$timeout_s "$perf" perf all_reduce -np 4 -b 1M -e 1M -w 2 -n 1000000 -c 1 >"$work/kill.log" 2>&1 &
launcher=$!
wait_for_busy_ranks "$launcher" 4 50 15  # all four spinning in collectives: 0.5 s of CPU each
victim=${ranks[1]:-}
killed_at=$SECONDS
[ -n "$victim" ] && kill -9 "$victim"
wait "$launcher"
rc=$?
elapsed=$((SECONDS - killed_at))
[ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$elapsed" -le "$timeout_s" ] &&
  grep -q "ncclshim perf: rank 1 was killed by signal 9" "$work/kill.log"
result $? "kill/rank-1-sigkilled-mid-collective-job-fails-within-${timeout_s}s" \
  "victim ${victim:-none}, rc $rc after ${elapsed}s: $(tail -n 4 "$work/kill.log")"
for r in 0 2 3; do
  grep -q "ncclshim perf: rank $r exited with code [1-9]" "$work/kill.log" &&
    grep "^ncclshim perf: rank $r: " "$work/kill.log" | grep -q "rank 1\b\|ranks \(.*,\)\?1\(,\|\b\)"
  result $? "kill/rank-$r-exits-non-zero-naming-rank-1" "$(grep "rank $r" "$work/kill.log" | tail -n 3)"
done

# ---- capture: SIGTERM after exactly N calls (raised by the program itself)
count_ops() { grep -c '"type":"op"' "$1"; }
footer_signal() { grep '"type":"footer"' "$1" | grep -q '"reason":"signal","signal":15'; }
n=1000
mkdir -p "$work/self"
NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$work/self" LD_PRELOAD="$lib" "$program" $n >"$work/self.out" 2>"$work/self.err" &
{ wait $!; } 2>/dev/null  # no "Terminated" line from bash
rc=$?
trace=$(ls "$work"/self/*.jsonl 2>/dev/null | head -1)
last=$(tail -n 1 "$work/self.out")
[ "$rc" -eq 143 ] && [ "$last" = "completed $n" ] && [ -n "$trace" ] && [ "$(count_ops "$trace")" -eq "$n" ] &&
  footer_signal "$trace"
result $? "capture/sigterm-after-$n-calls-trace-holds-all-$n" \
  "rc $rc, last '$last', trace ${trace:-none}: $( [ -n "$trace" ] && count_ops "$trace") ops, $(tail -c 300 "${trace:-/dev/null}") $(tail -n 3 "$work/self.err")"

# ---- capture: SIGTERM from outside at a random moment, three times
for round in 1 2 3; do
  dir="$work/ext$round"
  mkdir -p "$dir"
  NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$dir" LD_PRELOAD="$lib" "$program" 0 >"$dir.out" 2>"$dir.err" &
  pid=$!
  target=$((RANDOM % 3000 + 200 * round))
  for _ in $(seq 1 300); do
    sleep 0.02
    done_calls=$(tail -n 1 "$dir.out" 2>/dev/null | sed -n 's/^completed //p')
    [ "${done_calls:-0}" -ge "$target" ] && break
  done
  kill -TERM "$pid"
  { wait "$pid"; } 2>/dev/null  # no "Terminated" line from bash
  rc=$?
  reported=$(tail -n 1 "$dir.out" | sed -n 's/^completed //p')
  trace=$(ls "$dir"/*.jsonl 2>/dev/null | head -1)
  ops=$( [ -n "$trace" ] && count_ops "$trace" || echo -1)
  [ "$rc" -eq 143 ] && [ -n "$reported" ] && [ "$ops" -ge "$reported" ] && [ "$ops" -le $((reported + 1)) ] &&
    footer_signal "$trace"
  result $? "capture/external-sigterm-$round-trace-holds-every-completed-call (${reported:-?} reported, $ops in the trace)" \
    "rc $rc, trace ${trace:-none}, footer: $(grep '"type":"footer"' "${trace:-/dev/null}") $(tail -n 3 "$dir.err")"
done

# ---- cut: the trace of the first capture cut mid-line and at a line end
full=$(ls "$work"/self/*.jsonl 2>/dev/null | head -1)
if [ -n "$full" ]; then
  size=$(wc -c <"$full")
  first_line=$(head -n 1 "$full" | wc -c)
  # Offsets inside the second line, in the middle, just before the footer, and at a line end.
  mid_line_end=$(head -n 500 "$full" | wc -c)
  for offset in $((first_line + 10)) $((size / 2 + 7)) $((size - 30)) "$mid_line_end"; do
    cut="$work/cut-$offset.jsonl"
    head -c "$offset" "$full" >"$cut"
    complete=$(tr -cd '\n' <"$cut" | wc -c)
    partial=$((offset - $(head -n "$complete" "$cut" | wc -c)))
    want=$(head -n "$complete" "$cut" | grep -c '"type":"\(op\|comm\)"')
    got=$("$trace_tool" dump --comms "$cut" 2>"$work/cut.err" | grep -c '"type":"\(op\|comm\)"')
    "$trace_tool" validate "$cut" >"$work/cut.validate" 2>&1
    vrc=$?
    if [ "$partial" -gt 0 ]; then
      grep -q "cut at line $((complete + 1)) after $partial bytes" "$work/cut.err" &&
        grep -q "cut at line $((complete + 1)) after $partial bytes" "$work/cut.validate"
      reported=$?
      name="cut/mid-line-at-byte-$offset-keeps-$want-records-reports-line-$((complete + 1))"
    else
      grep -q "no footer" "$work/cut.validate"
      reported=$?
      name="cut/at-line-end-$complete-keeps-$want-records-reports-no-footer"
    fi
    [ "$got" -eq "$want" ] && [ "$reported" -eq 0 ] && [ "$vrc" -eq 0 ]
    result $? "$name" "dump kept $got of $want, validate rc $vrc: $(cat "$work/cut.err" "$work/cut.validate" | head -4)"
  done
else
  result 1 "cut/needs-the-capture-trace" "no trace from capture/sigterm-after-$n-calls"
fi

# ---- bootstrap: hostile clients at a live root, then the job completes
# Four ranks started as mpirun would (OMPI_COMM_WORLD_* set), rank 0 writing the unique id to a
# file; rank 3 is held back until the hostile clients are done.
idfile="$work/job.id"
go="$work/go"
for r in 0 1 2 3; do
  (
    [ "$r" -eq 3 ] && while [ ! -e "$go" ]; do sleep 0.05; done
    level=WARN
    [ "$r" -eq 0 ] && level=INFO  # the root's "rank N of 4 arrived" lines
    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=4 NCCLSHIM_TIMEOUT=60 NCCLSHIM_DEBUG=$level \
      exec "$perf" perf all_reduce --id-file "$idfile" -b 4K -e 64K -f 4 -n 5 -w 1 -c 1
  ) >"$work/boot$r.log" 2>&1 &
  eval "boot_pid_$r=$!"
done
for _ in $(seq 1 400); do  # until ranks 0, 1 and 2 have said hello to the root
  [ "$(grep -c "rank [012] of 4 arrived" "$work/boot0.log" 2>/dev/null)" -eq 3 ] && break
  sleep 0.05
done
python3 - "$idfile" >"$work/hostile.log" 2>&1 <<'PY'
import socket, struct, sys, time
hexid = open(sys.argv[1]).read().strip()
raw = bytes.fromhex(hexid)
family, port = struct.unpack(">HH", raw[8:12])
host = socket.inet_ntoa(raw[12:16]) if family == 4 else socket.inet_ntop(socket.AF_INET6, raw[12:28])
secret = raw[28:44]
addr = (host, port)
MAGIC, VERSION = 0x4E534253, 1
listen = struct.pack(">HH", 4, 9) + bytes([127, 0, 0, 1]) + bytes(12)

def hello(secret=secret, rank=0, nranks=4, magic=MAGIC, version=VERSION, kind=1):
    return struct.pack(">IHH", magic, version, kind) + secret + struct.pack(">III", rank, nranks, 60000) + listen

def answer(payload):
    """Sends payload; returns 'closed' or the root's error text."""
    s = socket.create_connection(addr, timeout=5)
    try:
        s.sendall(payload)
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    except socket.timeout:
        return "still open after 5 s"
    s.close()
    if not data:
        return "closed"
    magic, kind, code, nranks, length = struct.unpack(">IHHII", data[:16])
    return "error %d: %s" % (kind, data[16:16 + length].decode()) if kind == 3 else "kind %d" % kind

checks = [
    ("wrong-secret", hello(secret=bytes(16)), lambda a: "secret is not this job's" in a),
    ("bad-magic", hello(magic=0x12345678), lambda a: a == "closed"),
    ("wrong-version", hello(version=7), lambda a: a == "closed"),
    ("peer-hello-kind-at-root", hello(kind=4), lambda a: a == "closed"),
    ("nranks-beyond-limit", hello(nranks=0x7FFFFFFF), lambda a: "out of range" in a),
    ("rank-out-of-range", hello(rank=9), lambda a: "rank 9 is out of range" in a),
    ("duplicate-rank", hello(rank=1), lambda a: "joined twice" in a),
    ("64KiB-blob", bytes(range(256)) * 256, lambda a: a == "closed"),
]
stalled = socket.create_connection(addr, timeout=5)
stalled.sendall(hello()[:20])  # never finishes its hello: must not hold the others up
ok = True
for name, payload, good in checks:
    got = answer(payload)
    passed = good(got)
    ok &= passed
    print("%s %s: %s" % ("PASS" if passed else "FAIL", name, got))
sys.exit(0 if ok else 1)
PY
hostile_rc=$?
while read -r line; do
  case $line in
    PASS\ *) result 0 "bootstrap/refused-${line#PASS }" ;;
    FAIL\ *) result 1 "bootstrap/refused-${line#FAIL }" "${line#FAIL }" ;;
  esac
done <"$work/hostile.log"
[ "$hostile_rc" -eq 0 ] || [ "$(grep -c '^PASS\|^FAIL' "$work/hostile.log")" -gt 0 ] ||
  result 1 "bootstrap/hostile-client-ran" "$(tail -n 5 "$work/hostile.log")"
touch "$go"
job_rc=0
for r in 0 1 2 3; do
  eval "pid=\$boot_pid_$r"
  wait "$pid" || job_rc=1
done
rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +float' "$work/boot0.log")
wrong=$(awk '/^ +[0-9]+ +[0-9]+ +float/ && ($9 != 0 || $13 != 0) { bad++ } END { print bad + 0 }' "$work/boot0.log")
[ "$job_rc" -eq 0 ] && [ "$rows" -eq 3 ] && [ "$wrong" -eq 0 ] && grep -q "^# Out of bounds values : 0 OK" "$work/boot0.log"
result $? "bootstrap/job-completes-after-hostile-clients-every-element-checked" \
  "rc $job_rc, $rows rows, $wrong with wrong elements: $(tail -n 3 "$work"/boot*.log)"
# One summary line for the strangers (python3 from 127.0.0.1), none per connection.
[ "$(grep -c "without the job's secret" "$work/boot0.log")" -eq 1 ] &&
  grep -q "bootstrap root .*: ignored [0-9]* connections without the job's secret (from 127.0.0.1: .*1 with a wrong secret" "$work/boot0.log"
result $? "bootstrap/root-logs-one-summary-of-the-refusals" "$(grep -i "secret\|refused" "$work/boot0.log")"

# ---- bootstrap: a fake root whose reply announces more than the limits allow
fake_root() {  # fake_root <name> <reply kind> <length> -> runs rank 1 of 2 against it, prints "rc seconds"
  local name=$1 kind=$2 length=$3
  python3 - "$work/fake-$name.id" "$kind" "$length" >"$work/fake-$name.root" 2>&1 <<'PY' &
import os, socket, struct, sys
path, kind, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4)
port = srv.getsockname()[1]
body = struct.pack(">IHH", 0x4E534944, 1, 0) + struct.pack(">HH", 4, port) + bytes([127, 0, 0, 1]) + bytes(12) + os.urandom(16)
h = 2166136261
for b in body:
    h = ((h ^ b) * 16777619) & 0xFFFFFFFF
ident = body + struct.pack(">I", h)
ident += bytes(128 - len(ident))
open(path + ".tmp", "w").write(ident.hex() + "\n"); os.rename(path + ".tmp", path)
srv.settimeout(30)
conn, _ = srv.accept()
conn.recv(56)
conn.sendall(struct.pack(">IHHII", 0x4E534253, kind, 0, 2, length) + b"x" * 64)
conn.settimeout(30)
try:
    print("rank closed" if conn.recv(1) == b"" else "rank sent data")
except Exception as e:
    print("rank connection:", e)
PY
  local root=$!
  for _ in $(seq 1 100); do [ -s "$work/fake-$name.id" ] && break; sleep 0.05; done
  local start=$SECONDS
  OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 NCCLSHIM_TIMEOUT=20 timeout 60 "$perf" perf all_reduce \
    --id-file "$work/fake-$name.id" -b 4K -e 4K >"$work/fake-$name.log" 2>&1
  local rc=$? elapsed=$((SECONDS - start))
  wait "$root"
  echo "$rc $elapsed"
}
read -r rc elapsed < <(fake_root table 2 4294967295)
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$elapsed" -le 10 ] &&
  grep -q "bootstrap root at 127.0.0.1:[0-9]* sent a malformed table (kind 2, 2 ranks, 4294967295 bytes)" "$work/fake-table.log"
result $? "bootstrap/rank-refuses-a-table-length-beyond-limits" "rc $rc after ${elapsed}s: $(tail -n 3 "$work/fake-table.log")"
read -r rc elapsed < <(fake_root error 3 1000000000)
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$elapsed" -le 10 ] &&
  grep -q "bootstrap root at 127.0.0.1:[0-9]* sent an oversized error (1000000000 bytes, at most 4096)" "$work/fake-error.log"
result $? "bootstrap/rank-refuses-an-error-length-beyond-limits" "rc $rc after ${elapsed}s: $(tail -n 3 "$work/fake-error.log")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
