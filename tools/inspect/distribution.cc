// Counting the distribution of a workload and of a replay report (definitions in distribution.h).
#include "tools/inspect/distribution.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "phynet/report.h"
#include "phynet/traffic_model.h"
#include "phynet/workload_transform.h"

namespace nshim::tools {
namespace {

using RowKey = std::tuple<std::string, std::string, int, uint64_t>;  // op, group, nranks, bucket

}  // namespace

uint64_t ringWireBytes(const phynet::Workload& workload, const phynet::WorkOp& op, int rank) {
  const phynet::CommGroup* comm = workload.findComm(op.commId);
  if (!comm) return 0;
  CollectiveOptions ring;
  ring.smallAllReduceBytes = 0;  // ring algorithms only (NCCLSHIM_ALGO=ring)
  return phynet::modelSentBytes(op, phynet::commRankOf(*comm, rank), static_cast<int>(comm->members.size()), ring);
}

WorkloadDistribution distributionOf(const phynet::Workload& workload) {
  WorkloadDistribution d;
  d.description = workload.description;
  d.worldSize = workload.worldSize;
  std::map<RowKey, DistributionRow> rows;
  std::map<uint64_t, CommSummary> comms;
  for (const phynet::RankWork& rank : workload.ranks) {
    RankSummary total;
    total.rank = rank.globalRank;
    for (const phynet::WorkOp& op : rank.ops) {
      const phynet::CommGroup* comm = workload.findComm(op.commId);
      const std::string group = comm ? comm->label : "?";
      const int nranks = comm ? static_cast<int>(comm->members.size()) : 0;
      const uint64_t wire = ringWireBytes(workload, op, rank.globalRank);
      RowKey key{phynet::opKindName(op.kind), group, nranks, phynet::sizeBucket(op.bytes)};
      DistributionRow& row = rows[key];
      row.calls += 1;
      row.bytes += op.bytes;
      row.wireBytes += wire;
      CommSummary& c = comms[op.commId];
      c.calls += 1;
      c.bytes += op.bytes;
      c.wireBytes += wire;
      total.calls += 1;
      total.bytes += op.bytes;
      total.wireBytes += wire;
    }
    d.calls += total.calls;
    d.bytes += total.bytes;
    d.wireBytes += total.wireBytes;
    d.ranks.push_back(total);
  }
  for (auto& [key, row] : rows) {
    std::tie(row.op, row.group, row.nranks, row.bucket) = key;
    d.rows.push_back(row);
  }
  for (auto& [id, c] : comms) {
    c.id = id;
    if (const phynet::CommGroup* comm = workload.findComm(id)) {
      c.group = comm->label;
      c.members = comm->members;
    }
    d.comms.push_back(c);
  }
  std::sort(d.comms.begin(), d.comms.end(), [](const CommSummary& a, const CommSummary& b) {
    return std::tie(a.group, a.members) < std::tie(b.group, b.members);
  });
  return d;
}

ReportDistribution distributionOfReport(const ReplayReportCsv& report) {
  ReportDistribution d;
  struct Sums {
    ReportBucketRow row;
    double time = 0, algbw = 0, busbw = 0, recorded = 0;
    uint64_t recordedCount = 0;
  };
  std::map<RowKey, Sums> sums;
  double busbwSum = 0;
  for (const ReportRow& r : report.rows) {
    d.iterations = std::max(d.iterations, r.iteration + 1);
    d.ops += 1;
    d.bytes += r.bytes;
    d.totalTimeUs += r.timeUs;
    busbwSum += r.busbw;
    Sums& s = sums[RowKey{r.op, r.group, r.nranks, phynet::sizeBucket(r.bytes)}];
    ReportBucketRow& row = s.row;
    row.minTimeUs = row.ops == 0 ? r.timeUs : std::min(row.minTimeUs, r.timeUs);
    row.maxTimeUs = std::max(row.maxTimeUs, r.timeUs);
    row.maxBusbw = std::max(row.maxBusbw, r.busbw);
    row.ops += 1;
    row.bytes += r.bytes;
    s.time += r.timeUs;
    s.algbw += std::max(r.algbw, 0.0);
    s.busbw += r.busbw;
    if (r.recordedUs >= 0) {
      s.recorded += r.recordedUs;
      s.recordedCount += 1;
    }
  }
  d.meanBusbw = d.ops ? busbwSum / static_cast<double>(d.ops) : 0;
  for (auto& [key, s] : sums) {
    ReportBucketRow row = s.row;
    std::tie(row.op, row.group, row.nranks, row.bucket) = key;
    const double n = static_cast<double>(row.ops);
    row.meanTimeUs = s.time / n;
    row.meanAlgbw = s.algbw / n;
    row.meanBusbw = s.busbw / n;
    if (s.recordedCount) row.meanRecordedUs = s.recorded / static_cast<double>(s.recordedCount);
    d.rows.push_back(row);
  }
  return d;
}

}  // namespace nshim::tools
