// Says why a replay stands still: once a rank has completed no operation for a few seconds, one line
// per executor blocked in a transport wait names the rank, the communicator, the op (seq, iteration,
// source file:line) and the peer it waits on, e.g. "phynet: rank 0 waits 5.0 s on comm 0x1 (dp)
// allreduce seq 12 (iteration 3, w.txt:7) for rank 1 (a receive from it)". The line is repeated
// only when what is awaited changes, or every 30 s. Reads the executors' and transports' atomics
// (comm_executor.h, transport/core/wait_note.h) from the watching thread: nothing on the hot path.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "phynet/comm_executor.h"
#include "phynet/workload_names.h"
#include "transport/core/wait_note.h"
#include "workload/workload.h"

namespace nshim::phynet {

constexpr int64_t kStallReportAfterNs = 5'000'000'000;
constexpr int64_t kStallRepeatEveryNs = 30'000'000'000;

// The line for one blocked executor (no trailing newline). `wait.peer` is a communicator rank.
std::string stallLine(int globalRank, double waitedSeconds, const CommGroup& group, const WorkOp& op,
                      uint32_t iteration, uint32_t batchOps, const WaitNote::Snapshot& wait);

class StallReporter {
 public:
  StallReporter(int globalRank, const std::vector<WorkOp>& ops, std::vector<const CommExecutor*> executors,
                FILE* out = stderr);
  // Called by the watching loop: `lastProgressNs` is when the rank last completed an op (or had
  // nothing queued). Returns the number of lines printed.
  int tick(int64_t now, int64_t lastProgressNs);

 private:
  struct Shown {
    uint64_t key = UINT64_MAX;  // what was awaited when last printed
    int peer = -1;
    int64_t atNs = 0;
  };
  int globalRank_;
  const std::vector<WorkOp>& ops_;
  std::vector<const CommExecutor*> executors_;
  std::vector<Shown> shown_;
  FILE* out_;
};

}  // namespace nshim::phynet
