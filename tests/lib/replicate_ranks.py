#!/usr/bin/env python3
"""Grows a captured job's trace directory to N ranks by replicating its files with their ranks
rewritten (tests/suites/capture_tests.sh, and the 1,024-file figures of docs/capture.md): the
source's K rank files (rank0..rank{K-1}.jsonl, or any ncclshim-*.jsonl sorted by rank) become N/K
copies of the job; copy c holds global ranks c*K .. c*K+K-1, every communicator id of copy c is
made its own (so each copy's communicators have exactly the source's members), and every header
names the job (`job`). On request one rank's file is left out, and one rank's file names another
job.

usage: replicate_ranks.py SRC_DIR OUT_DIR N [--job J] [--missing R] [--other-job R:J]
"""
import argparse
import json
import os
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("src")
parser.add_argument("out")
parser.add_argument("n", type=int)
parser.add_argument("--job", default="job1")
parser.add_argument("--missing", type=int, default=-1)
parser.add_argument("--other-job", default="")
args = parser.parse_args()

def global_rank(path):
    with open(path) as f:
        return json.loads(f.readline())["global_rank"]

sources = sorted((os.path.join(args.src, name) for name in os.listdir(args.src) if name.endswith(".jsonl")),
                 key=global_rank)
k = len(sources)
if k == 0 or args.n % k:
    sys.exit(f"replicate_ranks: {args.n} ranks is not a multiple of the {k} files in {args.src}")
other_rank, other_job = (int(args.other_job.split(":")[0]), args.other_job.split(":")[1]) if args.other_job else (-1, "")
texts = [open(p).read().splitlines() for p in sources]
comm_re = re.compile(r'"(comm|parent)":"0x([0-9a-f]{16})"')
rank_re = re.compile(r'"global_rank":-?[0-9]+')
os.makedirs(args.out, exist_ok=True)
for copy in range(args.n // k):
    salt = (copy * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    def new_id(m):
        value = int(m.group(2), 16)
        return '"%s":"0x%016x"' % (m.group(1), value if value == 0 else (value ^ salt) or 1)
    for i, lines in enumerate(texts):
        rank = copy * k + i
        if rank == args.missing:
            continue
        job = other_job if rank == other_rank else args.job
        out = []
        for n, line in enumerate(lines):
            line = rank_re.sub('"global_rank":%d' % rank, line)
            line = comm_re.sub(new_id, line)
            if n == 0:
                line = line[:-1] + ',"job":"%s"}' % job
            out.append(line)
        with open(os.path.join(args.out, "ncclshim-%s-rank%d.jsonl" % (job, rank)), "w") as f:
            f.write("\n".join(out) + "\n")
