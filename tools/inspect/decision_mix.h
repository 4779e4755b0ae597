// NCCL's decisions in a version-2 trace (nccl_task / nccl_proxy lines from the profiler plugin),
// summed for `ncclshim summary`: per op and message-size bucket, the calls NCCL ran with each
// algorithm and protocol, their channel counts and the bytes their network proxy operations sent.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"

namespace nshim::tools {

struct DecisionRow {
  std::string op;       // the recorded op (allreduce, alltoall, send, ...)
  uint64_t bucket = 0;  // smallest power of two >= the op's bytes (as the distribution)
  std::string algo;     // NCCL's name (RING, TREE, ...); "p2p" for point-to-point tasks
  std::string proto;    // LL, LL128, SIMPLE; "-" for point-to-point
  uint64_t calls = 0;   // ops of all ranks
  uint64_t tasks = 0;
  int minChannels = 0;
  int maxChannels = 0;
  uint64_t netSentBytes = 0;  // sum of the send proxy operations' bytes
};

struct DecisionMix {
  std::vector<DecisionRow> rows;  // by op, bucket, algo, proto
  uint64_t tasks = 0;
  uint64_t proxies = 0;
  uint64_t unjoined = 0;  // task / proxy lines not joined to an op
};

// The mix of the trace at `path` (directory or file); no rows when it has no nccl_task lines.
Result<DecisionMix> decisionMixOfTrace(const std::string& path);
// The same from a trace already read (costs nothing for files without those lines).
DecisionMix decisionMixOfSet(const trace::TraceSet& set);
void printDecisionMixText(std::FILE* out, const DecisionMix& mix);
void printDecisionMixCsv(std::FILE* out, const DecisionMix& mix);

}  // namespace nshim::tools
