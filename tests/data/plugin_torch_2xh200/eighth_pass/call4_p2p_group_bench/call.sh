#!/usr/bin/env bash
# Eighth pass, call 4: bench/p2p_group_bench (fake NCCL; nccl-tests sendrecv -g 2's 14 calls per
# iteration, 10 recorded: 4 operations and 6 group starts / ends) on the GPU machine's CPU, sides
# interleaved round by round: forwarding, recording with OLD = 843b642, recording with NEW.
cd "$(dirname "$0")"
for r in 1 2 3 4 5 6 7; do
  for side in fwd old new; do
    so=$PWD/new.so; [ $side = old ] && so=$PWD/old.so
    env=(NCCLSHIM_MODE=forward); [ $side != fwd ] && env+=(NCCLSHIM_TRACE_DIR=/tmp/p2pt)
    rm -rf /tmp/p2pt
    env "${env[@]}" LD_PRELOAD=$so taskset -c 4 ./p2p_group_bench 20 2000 15000 200 | sed "s/^/round $r $side /"
  done
done
