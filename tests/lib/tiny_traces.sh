# Sourced by the test scripts: crafted ncclshim traces (FORMAT.md) too small to need a generator.
# tiny_trace <dir> <comms> [t_start_ns of a second op]: two ranks, <comms> communicators of both,
# one allreduce of one float (4 bytes) on each; with a third argument, a second allreduce on the
# first communicator recorded at that time.
tiny_trace() {
  local dir=$1 comms=$2 later=${3:-} r c n t
  mkdir -p "$dir"
  for r in 0 1; do
    {
      printf '{"type":"header","format":"ncclshim-trace","version":2,"abi":1,"host":"h","pid":%d,"ppid":1,"global_rank":%d,"clock":"CLOCK_MONOTONIC","start_realtime_ns":0,"start_monotonic_ns":0,"ring_records":4096}\n' $((100 + r)) "$r"
      n=0
      for ((c = 1; c <= comms; c++)); do
        printf '{"type":"comm","n":%d,"event":"init","comm":"0x%016x","parent":"0x0000000000000000","split_seq":0,"color":0,"key":0,"nranks":2,"rank":%d,"global_rank":%d,"host":"h","pid":%d,"device":-1,"t_ns":1000}\n' $n "$c" "$r" "$r" $((100 + r))
        t=$((2000 + c * 1000))
        printf '{"type":"op","n":%d,"comm":"0x%016x","rank":%d,"seq":0,"op":"allreduce","count":1,"dtype":"float32","redop":"sum","root":-1,"peer":-1,"nranks":2,"bytes":4,"stream":"0x0000000000000000","group":0,"t_start_ns":%d,"t_end_ns":%d,"gpu_start_ns":0,"gpu_end_ns":0,"flags":0,"result":0}\n' $((n + 1)) "$c" "$r" "$t" $((t + 100))
        n=$((n + 2))
      done
      if [ -n "$later" ]; then
        printf '{"type":"op","n":%d,"comm":"0x%016x","rank":%d,"seq":1,"op":"allreduce","count":1,"dtype":"float32","redop":"sum","root":-1,"peer":-1,"nranks":2,"bytes":4,"stream":"0x0000000000000000","group":0,"t_start_ns":%s,"t_end_ns":%s,"gpu_start_ns":0,"gpu_end_ns":0,"flags":0,"result":0}\n' $n 1 "$r" "$later" "$later"
      fi
    } >"$dir/rank$r.jsonl"
  done
}
