// Counting the distribution of a workload and of a replay report (definitions in distribution.h).
#include "tools/inspect/distribution.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "workload/size_bucket.h"
#include "workload/traffic_model.h"
#include "workload/workload_transform.h"

namespace nshim::tools {
namespace {

using RowKey = std::tuple<std::string, std::string, int, uint64_t>;  // op, group, nranks, bucket

// Expected payload bytes of `op` from comm rank `self` of an n-rank communicator, ring algorithms.
uint64_t ringWire(const workload::WorkOp& op, int self, int nranks) {
  if (self < 0 || nranks <= 0) return 0;  // an op on a communicator the workload does not know
  static const CollectiveOptions ring = [] {
    CollectiveOptions o;
    o.smallAllReduceBytes = 0;  // ring algorithms only (NCCLSHIM_ALGO=ring), whatever the trace recorded
    o.algorithm = Algorithm::kRing;
    o.protocol = Protocol::kSimple;  // the payload, without LL's lines
    return o;
  }();
  return workload::modelSentBytes(op, self, nranks, ring);
}

}  // namespace

uint64_t ringWireBytes(const workload::Workload& workload, const workload::WorkOp& op, int rank) {
  const workload::CommGroup* comm = workload.findComm(op.commId);
  if (!comm) return 0;
  return ringWire(op, workload::commRankOf(*comm, rank), static_cast<int>(comm->members.size()));
}

// A new field may change what the traffic model or the row of a call is: add it to CallKey if so.
static_assert(sizeof(workload::WorkOp) == 88, "WorkOp changed: check DistributionCounter::CallKey");

size_t DistributionCounter::CallKeyHash::operator()(const CallKey& k) const {
  uint64_t h = k.bytes;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x9E3779B97F4A7C15ull; };
  mix(k.count);
  mix(static_cast<uint32_t>(k.group) | static_cast<uint64_t>(static_cast<uint32_t>(k.commRank)) << 32);
  mix(static_cast<uint32_t>(k.root) | static_cast<uint64_t>(static_cast<uint32_t>(k.peer)) << 32);
  mix(static_cast<uint32_t>(k.type) | static_cast<uint64_t>(k.kind) << 32 | static_cast<uint64_t>(k.origin) << 40);
  mix(k.algo | k.proto << 8 | k.channels << 16);
  return static_cast<size_t>(h ^ (h >> 31));
}

const DistributionCounter::CommEntry& DistributionCounter::commEntryOf(const workload::WorkOp& op,
                                                                       const workload::CommGroup& comm) {
  auto found = commEntries_.find(op.commId);
  if (found != commEntries_.end()) return found->second;
  const std::pair<std::string, int> group{comm.label, static_cast<int>(comm.members.size())};
  const int index = groups_.emplace(group, static_cast<int>(groups_.size())).first->second;
  return commEntries_.emplace(op.commId, CommEntry{&comms_[op.commId], index}).first->second;
}

const DistributionCounter::CallTally& DistributionCounter::callTallyOf(int rank, const workload::WorkOp& op,
                                                                       const workload::CommGroup& comm, int group) {
  const int self = workload::commRankOf(comm, rank);
  const CallKey key{op.bytes,
                    op.count,
                    group,
                    self,
                    op.root,
                    op.peer,
                    static_cast<int>(op.type),
                    static_cast<uint8_t>(op.kind),
                    static_cast<uint8_t>(op.origin),
                    static_cast<uint8_t>(op.algo),
                    static_cast<uint8_t>(op.proto),
                    op.channels};
  auto found = calls_.find(key);
  if (found != calls_.end()) return found->second;
  if (calls_.size() >= kMaxCalls) calls_.clear();
  // The pieces of an uneven all-to-all are rows of their own ("alltoallv send"), not plain p2p.
  std::string name = workload::opKindName(op.kind);
  if (op.origin != workload::OpOrigin::kCall) name = fmt::format("{} {}", workload::opOriginName(op.origin), name);
  const int nranks = static_cast<int>(comm.members.size());
  const CallTally tally{&rows_[RowKey{name, comm.label, nranks, workload::sizeBucket(op.bytes)}],
                        ringWire(op, self, nranks)};
  return calls_.emplace(key, tally).first->second;
}

void DistributionCounter::add(int rank, const workload::WorkOp& op, const workload::CommGroup& comm) {
  const CommEntry& entry = commEntryOf(op, comm);
  const CallTally& tally = callTallyOf(rank, op, comm, entry.group);
  const uint64_t wire = tally.wire;
  DistributionRow& row = *tally.row;
  row.calls += 1;
  row.bytes += op.bytes;
  row.wireBytes += wire;
  CommSummary& c = *entry.sums;
  c.calls += 1;
  c.collectiveCalls += describe(op.kind).pointToPoint ? 0 : 1;
  c.exchangeCalls += describe(op.kind).pointToPoint || op.kind == workload::OpKind::kAllToAll ? 1 : 0;
  if (op.kind == workload::OpKind::kSend || op.kind == workload::OpKind::kAllToAll) {
    if (c.firstExchange == 0) c.firstExchange = op.count + 1;
    c.evenExchange = c.evenExchange && c.firstExchange == op.count + 1;
    c.sendsToSelf = c.sendsToSelf || (op.kind == workload::OpKind::kSend && op.peer >= 0 &&
                                      op.peer < static_cast<int>(comm.members.size()) && comm.members[op.peer] == rank);
  }
  c.bytes += op.bytes;
  c.wireBytes += wire;
  if (rank >= static_cast<int>(ranks_.size())) ranks_.resize(static_cast<size_t>(rank) + 1);
  RankSummary& total = ranks_[rank];
  total.calls += 1;
  total.bytes += op.bytes;
  total.wireBytes += wire;
}

WorkloadDistribution DistributionCounter::finish(const workload::Workload& workload) {
  WorkloadDistribution d;
  d.description = workload.description;
  d.worldSize = workload.worldSize;
  ranks_.resize(std::max<size_t>(ranks_.size(), static_cast<size_t>(std::max(workload.worldSize, 0))));
  for (size_t g = 0; g < ranks_.size(); ++g) {
    ranks_[g].rank = static_cast<int>(g);
    d.calls += ranks_[g].calls;
    d.bytes += ranks_[g].bytes;
    d.wireBytes += ranks_[g].wireBytes;
  }
  d.ranks = std::move(ranks_);
  for (auto& [key, row] : rows_) {
    std::tie(row.op, row.group, row.nranks, row.bucket) = key;
    d.rows.push_back(row);
  }
  for (auto& [id, c] : comms_) {
    c.id = id;
    if (const workload::CommGroup* comm = workload.findComm(id)) {
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

WorkloadDistribution distributionOf(const workload::Workload& workload) {
  DistributionCounter counter;
  static const workload::CommGroup kUnknown{0, {}, "?"};
  for (const workload::RankWork& rank : workload.ranks) {
    for (const workload::WorkOp& op : rank.ops) {
      const workload::CommGroup* comm = workload.findComm(op.commId);
      counter.add(rank.globalRank, op, comm ? *comm : kUnknown);
    }
  }
  return counter.finish(workload);
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
    Sums& s = sums[RowKey{r.op, r.group, r.nranks, workload::sizeBucket(r.bytes)}];
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
