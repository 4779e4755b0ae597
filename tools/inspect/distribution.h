// The communication distribution of a job (AICB's view of a workload): calls and bytes by op x group
// x message-size bucket, per communicator and per rank, with the payload bytes each rank is expected
// to put on the wire under ring algorithms (phynet's traffic model, recursive doubling off). For a
// phynet report: replayed time and bus bandwidth by op x group x size bucket.
//
// Definitions. A "call" is one rank's NCCL call: a collective on an n-rank communicator is n calls.
// "bytes" is the nccl-tests size of each call (FORMAT.md's bytes rule) summed over the calls. The
// "group" is the communicator's role label as phynet derives it (trace_workload.h: world, tp, dp, pp,
// comm<N>; SimAI / AICB: their group names) and "nranks" its size. The size bucket of a message is
// the smallest power of two >= its bytes (phynet's sizeBucket), so a bucket B holds sizes in (B/2, B].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tools/inspect/report_reader.h"
#include "workload/workload.h"

namespace nshim::tools {

struct DistributionRow {
  std::string op;
  std::string group;
  int nranks = 0;
  uint64_t bucket = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t wireBytes = 0;  // sent by all calling ranks under ring algorithms
};

struct CommSummary {
  uint64_t id = 0;
  std::string group;
  std::vector<int> members;  // global ranks in communicator-rank order
  uint64_t calls = 0;
  uint64_t collectiveCalls = 0;  // calls that are not sends or receives
  uint64_t exchangeCalls = 0;    // all-to-alls, sends and receives
  uint64_t firstExchange = 0;    // the first send's or all-to-all's count + 1 (0: none yet)
  bool evenExchange = true;      // every send and all-to-all moves that count
  bool sendsToSelf = false;      // some send addresses its sender
  uint64_t bytes = 0;
  uint64_t wireBytes = 0;
};

struct RankSummary {
  int rank = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t wireBytes = 0;
};

struct WorkloadDistribution {
  std::string description;
  int worldSize = 0;
  std::vector<DistributionRow> rows;  // by op, group, nranks, bucket
  std::vector<CommSummary> comms;     // communicators that carry calls, by group then first member
  std::vector<RankSummary> ranks;     // every global rank
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t wireBytes = 0;
  std::vector<std::string> shapeLines;  // printed under the totals (job_shape_lines.h); traces only
};

WorkloadDistribution distributionOf(const workload::Workload& workload);

// The same distribution counted op by op, as a workload is expanded (WorkloadOptions::opSink), so
// that a 9216-rank SimAI file is summarised without holding its tens of millions of ops.
class DistributionCounter {
 public:
  void add(int rank, const workload::WorkOp& op, const workload::CommGroup& comm);
  // The distribution of everything added; `workload` gives the description, the world and the
  // communicators (its ops are not read).
  WorkloadDistribution finish(const workload::Workload& workload);

 private:
  using RowKey = std::tuple<std::string, std::string, int, uint64_t>;  // op, group, nranks, bucket
  // What a call adds is worked out once per distinct call and then looked up: a 9216-rank SimAI
  // file is tens of millions of calls of a few thousand kinds. A communicator is found by its id,
  // and a call by its communicator's group and size (its row's), the caller's place in it and the
  // fields of WorkOp that its row and the traffic model read.
  struct CommEntry {
    CommSummary* sums;  // into comms_ (map nodes do not move)
    int group;          // index in groups_: the communicator's (label, size)
  };
  struct CallKey {
    uint64_t bytes;
    uint64_t count;
    int group;
    int commRank;
    int root;
    int peer;
    int type;
    uint8_t kind;
    uint8_t origin;
    uint8_t algo;
    uint8_t proto;
    uint8_t channels;
    bool operator==(const CallKey&) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey& k) const;
  };
  struct CallTally {
    DistributionRow* row;  // into rows_
    uint64_t wire;
  };
  static constexpr size_t kMaxCalls = 1 << 16;  // a cache: cleared when full (a trace of many sizes)
  const CommEntry& commEntryOf(const workload::WorkOp& op, const workload::CommGroup& comm);
  const CallTally& callTallyOf(int rank, const workload::WorkOp& op, const workload::CommGroup& comm, int group);

  std::map<RowKey, DistributionRow> rows_;
  std::map<uint64_t, CommSummary> comms_;
  std::map<std::pair<std::string, int>, int> groups_;
  std::unordered_map<uint64_t, CommEntry> commEntries_;
  std::unordered_map<CallKey, CallTally, CallKeyHash> calls_;
  std::vector<RankSummary> ranks_;
};

// Expected payload bytes `op` sends from global rank `rank` under ring algorithms.
uint64_t ringWireBytes(const workload::Workload& workload, const workload::WorkOp& op, int rank);

struct ReportBucketRow {
  std::string op;
  std::string group;
  int nranks = 0;
  uint64_t bucket = 0;
  uint64_t ops = 0;  // report rows (operations x measured iterations)
  uint64_t bytes = 0;
  double meanTimeUs = 0;
  double minTimeUs = 0;
  double maxTimeUs = 0;
  double meanAlgbw = 0;  // GB/s
  double meanBusbw = 0;
  double maxBusbw = 0;
  double meanRecordedUs = -1;  // over the rows with a recorded time; -1 when none has one
};

struct ReportDistribution {
  int iterations = 0;  // measured iterations in the report
  uint64_t ops = 0;
  uint64_t bytes = 0;
  double totalTimeUs = 0;  // sum of the rows' times
  double meanBusbw = 0;    // over all rows (nccl-tests' "Avg bus bandwidth")
  std::vector<ReportBucketRow> rows;
};

ReportDistribution distributionOfReport(const ReplayReportCsv& report);

}  // namespace nshim::tools
