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
#include "phynet/step_times.h"
#include "phynet/timeline_score.h"
#include "phynet/workload_names.h"
#include "workload/size_bucket.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct OpRow {
  std::string op;             // opKindName, or "sendrecv"
  std::string label;          // communicator label
  uint64_t commId = 0;
  int nranks = 0;
  int iteration = 0;          // measured iterations from 0 (warmup left out)
  uint64_t seq = 0;           // on the communicator's rank 0 (the sender for sendrecv)
  uint64_t count = 0;
  DataType type = DataType::kFloat32;
  uint64_t bytes = 0;         // nccl-tests size
  std::string ranks;          // "3->1" (global ranks) for sendrecv, else ""
  std::string algorithm;      // what the engine ran: ring, tree, rd, chain, p2p, copy
  int channels = 0;           // the ring's or tree's channels; 0 where the algorithm has none
  std::string protocol;       // NCCL's protocol it moved in: simple, ll, ll128
  double startUs = 0;         // earliest member start since its rank's run start
  double timeUs = 0;
  double algbw = 0;           // GB/s (1e9 bytes)
  double busbw = 0;
  double efficiency = -1;     // % of the rate; -1 without a rate
  double recordedUs = -1;     // -1 when unknown
  RecordedClock recordedClock = RecordedClock::kNone;  // what recordedUs measured (a CPU call is no duration)
  double ratio = -1;          // replayed / recorded, only where the recorded time is GPU (or stated) time
  double recordedStartUs = -1;  // on a GPU timeline: the earliest member's GPU start since its rank's first op
  // Why the op took its time: from the first member's start to the last member's (waiting for the
  // last rank to arrive), and from there to the last member's end (moving the data); -1 unknown.
  double arrivalWaitUs = -1;
  double dataUs = -1;
  int lastRank = -1;          // the global rank that started last; -1 with one member
};

struct SummaryRow {
  std::string op;
  std::string label;
  uint64_t bucketBytes = 0;   // the size bucket: sizes in (bucket/2, bucket]
  uint64_t count = 0;
  uint64_t totalBytes = 0;
  double meanTimeUs = 0;
  double meanBusbw = 0;
  double meanEfficiency = -1;
  double meanRecordedUs = -1;  // GPU (or stated) time only
  double meanCpuCallUs = -1;   // CPU call times (a trace captured without GPU timing): never compared
  double meanArrivalWaitUs = -1;
  double meanDataUs = -1;
  int lastRank = -1;           // the rank that arrived last in every one of its ops where ranks waited; -1 none
};

// Who the ranks waited for: over the rows where the arrival wait was significant (at least
// kSignificantWaitUs and a tenth of the op's time), the rank that arrived last.
struct StragglerFinding {
  static constexpr double kSignificantWaitUs = 10;
  uint64_t rows = 0;           // rows with more than one member
  uint64_t rowsWaited = 0;     // of them, with a significant arrival wait
  // The one rank that arrived last at every one of those it took part in (a straggler; rows without
  // it may wait too, as its lateness spreads); -1 none, or several.
  int rank = -1;
  uint64_t rowsCaused = 0;     // the rows the figures below are over: where `rank` was last (all waited rows without one)
  double meanWaitUs = 0;
  double totalWaitUs = 0;
  double meanDataUs = 0;       // moving the data once the last rank arrived
  std::vector<std::pair<int, uint64_t>> lastArrivals;  // rank -> rows it arrived last in, most first
};

struct ReplayReport {
  std::string description;
  int worldSize = 0;
  int iterations = 0;         // measured
  int warmup = 0;
  double rateGBps = 0;
  double endToEndSeconds = 0; // measured iterations, longest rank
  std::vector<OpRow> rows;    // by iteration, then start time
  std::vector<SummaryRow> summary;
  std::vector<RankCounters> ranks;
  std::vector<RankEndpoint> endpoints;  // per global rank; empty when unknown (unit tests)
  HostTraffic traffic;                  // by host and NIC, when the endpoints are known
  StepTimes steps;                      // time per training iteration found in the trace
  // What the recorded times are: "gpu", "cpu_call", "stated", "mixed" or "none".
  std::string recordedClock = "none";
  StragglerFinding straggler;
  TimelineScore timeline;               // against a GPU-timed capture (timeline_score.h)
  std::vector<NcclSettingInForce> ncclSettings;  // the job's NCCL settings in force (common/nccl_env.h)
  std::string ncclNote;                 // about them (ranks' captures that differ, settings left out)
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
  CollectiveOptions collectives;               // the engine's options (which algorithm each op ran)
  bool sharedClock = false;  // every rank's clock is the same (one host): arrival waits on absolute times
  bool paced = false;        // --pace recorded
};

ReplayReport buildReport(const ReportInput& input);

}  // namespace nshim::phynet
