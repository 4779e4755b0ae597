// The replay of one rank: a dispatcher thread walks the rank's operations in issue order (every
// iteration), paces them, and hands each op, or each group's ops split by communicator, to that
// communicator's executor; the calling thread watches progress (a line on stderr every ~2 s when
// asked) and the first failure. Returns the per-op timings and the rank's counters.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "phynet/comm_executor.h"
#include "phynet/op_runner.h"
#include "phynet/replay_options.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct ReplayConfig {
  Pace pace = Pace::kFast;
  int iterations = 1;                // total, warmup included
  double stallSeconds = 120;         // no op completing for this long ends the replay
  double timeoutSeconds = 120;       // --timeout: --pace recorded refuses a gap longer than this
  bool showProgress = false;         // progress lines on stderr (rank 0)
  bool verify = false;               // --verify (phynet/data_check.h)
  uint64_t maxBufferBytes = kNoCap;  // --max-buffer: each arena side's cap without --verify (op_pieces.h)
  int64_t delayNs = 0;               // --delay: this rank waits this long before every delayEvery-th batch
  int delayEvery = 1;
  // --staging: without --verify, each arena side is this much memory mapped over and over its whole
  // size (aliased_memory.h), as NCCL's proxy moves data through NCCL_BUFFSIZE per connection; 0: whole.
  uint64_t stagingBytes = 0;
  // Called once this rank's buffers are allocated and its executors run, just before timing starts
  // (phynet: a barrier across ranks, so that no rank's first operation waits for another's set-up).
  std::function<void()> startTogether;
};

// Counters of one rank after the replay (all iterations).
// What this rank sent to one other rank, over all its communicators.
struct PeerTraffic {
  uint64_t sent = 0;      // payload bytes (PeerBytes::sent)
  uint64_t wire = 0;      // with the transport's framing (PeerBytes::sentWire)
  uint64_t messages = 0;  // sends posted
  uint64_t model = 0;     // what traffic_model predicts for `sent`
  uint64_t links = 0;     // connections that carried sends (PeerBytes::sendLinks), over all communicators
};

struct RankCounters {
  uint64_t ops = 0;       // operations executed
  uint64_t opBytes = 0;   // sum of their nccl-tests sizes
  uint64_t wireSent = 0;  // payload bytes the transports sent (peerBytes)
  uint64_t wireReceived = 0;
  uint64_t wireZeroCopy = 0;   // of wireReceived, written straight into the registered arena (ibverbs)
  uint64_t modelSent = 0;      // what traffic_model predicts for wireSent
  uint64_t bytesVerified = 0;  // --verify: result bytes checked against their expected values
  int64_t readyNs = 0;         // this rank's clock: buffers allocated, executors running (before startTogether)
  int64_t runStartNs = 0;      // this rank's clock
  int64_t runEndNs = 0;
  uint64_t plannedBufferBytes = 0;  // the buffers planned for this rank (memory_plan.h)
  uint64_t peakRssBytes = 0;        // this process's peak resident memory at the end (getrusage)
  // The training iterations found in this rank's ops (workload/iteration_period.h); 0 when none.
  int64_t stepPeriod = 0;          // calls per iteration
  int64_t stepFirst = 0;           // index of the first call of the first whole iteration
  int64_t stepCount = 0;           // whole iterations
  std::vector<PeerTraffic> peers;  // by global rank (world size entries)
};

struct RankReplayResult {
  std::vector<OpTiming> timings;  // [iteration * opsPerIteration + index]
  RankCounters counters;
};

// `comms` holds a Communicator for every communicator this rank is a member of, by id.
Result<RankReplayResult> replayRank(const Workload& workload, int globalRank,
                                    std::map<uint64_t, std::unique_ptr<Communicator>>& comms,
                                    const ReplayConfig& config);

// The batches of one iteration in issue order: consecutive ops with the same non-zero group id
// form one group; a group is split by communicator (first appearance first).
std::vector<std::vector<uint32_t>> issueBatches(const std::vector<WorkOp>& ops);

}  // namespace nshim::phynet
