// The replay report, built on rank 0 from every rank's per-op timings and counters: one row per
// operation and iteration (a collective's time is the longest of its members' end - start; a send
// and its matching receive form one row), nccl-tests algbw / busbw, efficiency against a link rate,
// the recorded time beside the replayed one, a summary by op x communicator label x size bucket,
// and the end-to-end time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/nccl_env.h"
#include "phynet/host_traffic.h"
#include "phynet/op_runner.h"
#include "phynet/rank_endpoint.h"
#include "phynet/replay.h"
#include "phynet/slow_ops.h"
#include "phynet/step_times.h"
#include "phynet/timeline_score.h"
#include "phynet/workload_names.h"
#include "workload/size_bucket.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct OpRow {
  std::string op;     // opKindName, or "sendrecv"
  std::string label;  // communicator label
  uint64_t commId = 0;
  int nranks = 0;
  int iteration = 0;  // measured iterations from 0 (warmup left out)
  uint64_t seq = 0;   // on the communicator's rank 0 (the sender for sendrecv)
  uint64_t count = 0;
  DataType type = DataType::kFloat32;
  uint64_t bytes = 0;     // nccl-tests size
  std::string ranks;      // "3->1" (global ranks) for sendrecv, else ""
  std::string algorithm;  // what the engine ran: ring, tree, rd, chain, p2p, copy
  int channels = 0;       // the ring's or tree's channels; 0 where the algorithm has none
  std::string protocol;   // NCCL's protocol it moved in: simple, ll, ll128
  double startUs = 0;     // earliest member start since its rank's run start
  double timeUs = 0;
  double algbw = 0;  // GB/s (1e9 bytes)
  double busbw = 0;
  double efficiency = -1;  // % of the rate; -1 without a rate
  double recordedUs = -1;  // -1 when unknown
  double ratio = -1;       // replayed / recorded, only where recorded is GPU time or a file's figure
  // Waiting for the last member against moving the data: the members' starts (their clocks aligned
  // at the common run start) spread over waitUs; the last to start was lastRank (global; -1 for a
  // one-member row); moveUs runs from that last start to the latest end.
  double waitUs = 0;
  double moveUs = 0;
  int lastRank = -1;
  double recordedStartUs = -1;  // on a GPU timeline: the earliest member's GPU start since its rank's first op
};

// The rank the others waited for: of the ops that waited (over 5 % of their time) for a late
// member, each rank's share of those it was a member of where it started last; of the ranks whose
// share is at least 90 % (a rank held back drags its partners late in their other ops, but is itself
// last wherever it takes part), the one whose lateness made the others wait longest.
struct Straggler {
  int rank = -1;            // -1: none
  uint64_t lastIn = 0;      // ops it started last in
  uint64_t waitingOps = 0;  // ops that waited and had it as a member (without a straggler: the most of any rank)
  double waitUs = 0;        // the wait it caused in those ops (sum)
};

struct SummaryRow {
  std::string op;
  std::string label;
  uint64_t bucketBytes = 0;  // the size bucket: sizes in (bucket/2, bucket]
  uint64_t count = 0;
  uint64_t totalBytes = 0;
  double meanTimeUs = 0;
  double meanBusbw = 0;
  double meanEfficiency = -1;
  double meanRecordedUs = -1;
};

struct ReplayReport {
  std::string description;
  int worldSize = 0;
  int iterations = 0;  // measured
  int warmup = 0;
  double rateGBps = 0;
  double endToEndSeconds = 0;  // measured iterations, longest rank
  std::vector<OpRow> rows;     // by iteration, then start time
  std::vector<SummaryRow> summary;
  std::vector<RankCounters> ranks;
  std::vector<RankEndpoint> endpoints;  // per global rank; empty when unknown (unit tests)
  HostTraffic traffic;                  // by host and NIC, when the endpoints are known
  StepTimes steps;                      // time per training iteration found in the trace
  Straggler straggler;
  RecordedClock recordedClock = RecordedClock::kNone;  // what "recorded" is; ratios only when comparable
  TimelineScore timeline;                              // against a GPU-timed capture (timeline_score.h)
  std::vector<SlowOp> slowOps;                         // ops far slower than their like (slow_ops.h), slowest first
  std::vector<NcclSettingInForce> ncclSettings;        // the job's NCCL settings in force (common/nccl_env.h)
  std::string ncclNote;                                // about them (ranks' captures that differ, settings left out)
};

struct ReportInput {
  const Workload* workload = nullptr;
  std::vector<std::vector<OpTiming>> timings;  // per global rank: [iteration * ops + index]
  std::vector<RankCounters> counters;          // per global rank
  std::vector<RankEndpoint> endpoints;         // per global rank, or empty
  std::vector<int> nodeOfRank;                 // NCCL's node of each global rank; empty: each its own
  int iterations = 1;                          // measured
  int warmup = 0;
  double rateGBps = 0;
  CollectiveOptions collectives;  // the engine's options (which algorithm each op ran)
  bool paced = false;             // --pace recorded
  bool sharedClock = false;       // every rank on one host: arrivals compared on its clock
};

ReplayReport buildReport(const ReportInput& input);

}  // namespace nshim::phynet
