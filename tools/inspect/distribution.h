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
#include <tuple>
#include <string>
#include <vector>

#include "workload/workload.h"
#include "tools/inspect/report_reader.h"

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
  std::map<RowKey, DistributionRow> rows_;
  std::map<uint64_t, CommSummary> comms_;
  std::vector<RankSummary> ranks_;
};

// Expected payload bytes `op` sends from global rank `rank` under ring algorithms.
uint64_t ringWireBytes(const workload::Workload& workload, const workload::WorkOp& op, int rank);

struct ReportBucketRow {
  std::string op;
  std::string group;
  int nranks = 0;
  uint64_t bucket = 0;
  uint64_t ops = 0;            // report rows (operations x measured iterations)
  uint64_t bytes = 0;
  double meanTimeUs = 0;
  double minTimeUs = 0;
  double maxTimeUs = 0;
  double meanAlgbw = 0;        // GB/s
  double meanBusbw = 0;
  double maxBusbw = 0;
  double meanRecordedUs = -1;  // over the rows with a recorded time; -1 when none has one
};

struct ReportDistribution {
  int iterations = 0;          // measured iterations in the report
  uint64_t ops = 0;
  uint64_t bytes = 0;
  double totalTimeUs = 0;      // sum of the rows' times
  double meanBusbw = 0;        // over all rows (nccl-tests' "Avg bus bandwidth")
  std::vector<ReportBucketRow> rows;
};

ReportDistribution distributionOfReport(const ReplayReportCsv& report);

}  // namespace nshim::tools
