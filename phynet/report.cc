// Report building: ops are matched across ranks the same way the validation pairs them (the k-th
// collective of each member of a communicator; the k-th send a->b with the k-th receive on b from a).
#include "phynet/report.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "model/call_decision.h"
#include "workload/traffic_model.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

struct Member {
  int global = 0;
  uint32_t index = 0;  // op index in that rank's list
};

struct CommIndex {
  const CommGroup* comm = nullptr;
  std::vector<std::vector<uint32_t>> collectives;              // per comm rank: op indices
  std::map<std::pair<int, int>, std::vector<uint32_t>> sends;  // (from, to) comm ranks
  std::map<std::pair<int, int>, std::vector<uint32_t>> recvs;
};

std::vector<CommIndex> indexComms(const Workload& w) {
  std::vector<CommIndex> out(w.comms.size());
  std::map<uint64_t, size_t> position;
  for (size_t i = 0; i < w.comms.size(); ++i) {
    out[i].comm = &w.comms[i];
    out[i].collectives.resize(w.comms[i].members.size());
    position[w.comms[i].id] = i;
  }
  for (const RankWork& rank : w.ranks) {
    for (uint32_t k = 0; k < rank.ops.size(); ++k) {
      const WorkOp& op = rank.ops[k];
      CommIndex& c = out[position.at(op.commId)];
      int self = commRankOf(*c.comm, rank.globalRank);
      if (op.kind == OpKind::kSend) c.sends[{self, op.peer}].push_back(k);
      else if (op.kind == OpKind::kRecv) c.recvs[{op.peer, self}].push_back(k);
      else c.collectives[self].push_back(k);
    }
  }
  return out;
}

class RowMaker {
 public:
  explicit RowMaker(const ReportInput& in) : in_(in) {}

  // The communicator's NCCL nodes, as the replay placed them; every rank its own when not known.
  int nodesOf(const CommGroup& comm) const {
    std::set<int> nodes;
    for (int g : comm.members) {
      nodes.insert(g >= 0 && g < static_cast<int>(in_.nodeOfRank.size()) ? in_.nodeOfRank[g] : -1 - g);
    }
    return std::max<int>(1, static_cast<int>(nodes.size()));
  }

  // A row from the members' timings of one op in measured iteration `it`.
  OpRow make(const WorkOp& ref, const CommGroup& comm, const std::vector<Member>& members, int it) const {
    OpRow row;
    row.op = reportOpName(ref.kind);
    row.label = comm.label;
    row.commId = comm.id;
    row.nranks = static_cast<int>(comm.members.size());
    row.iteration = it;
    row.seq = ref.seq;
    row.count = ref.count;
    row.type = ref.type;
    row.bytes = ref.bytes;
    const CallDecision decision = decisionOf(callRecordOf(ref), in_.collectives, row.nranks, nodesOf(comm));
    row.algorithm = decision.algorithm;
    row.channels = decision.channels;
    row.protocol = protocolName(decision.protocol);
    int64_t longest = 0, recorded = -1, recordedStart = INT64_MAX;
    double start = -1, firstArrival = 0, lastArrival = 0, end = 0;
    bool first = true;
    for (const Member& m : members) {
      const WorkOp& op = in_.workload->ranks[m.global].ops[m.index];
      size_t perIteration = in_.workload->ranks[m.global].ops.size();
      const OpTiming& t = in_.timings[m.global][(it + in_.warmup) * perIteration + m.index];
      longest = std::max(longest, t.endNs - t.startNs);
      const int64_t runStart = in_.counters[m.global].runStartNs;
      double s = (t.startNs - runStart) * 1e-3;
      start = start < 0 ? s : std::min(start, s);
      // Arrivals on one clock: the host's own where every rank shares it, else each rank's run
      // start (the ranks left the start barrier together, within the barrier's skew).
      const int64_t origin = in_.sharedClock ? 0 : runStart;
      const double arrival = (t.startNs - origin) * 1e-3;
      if (first || arrival > lastArrival) {
        lastArrival = arrival;
        row.lastRank = m.global;
      }
      firstArrival = first ? arrival : std::min(firstArrival, arrival);
      end = first ? (t.endNs - origin) * 1e-3 : std::max(end, (t.endNs - origin) * 1e-3);
      first = false;
      recorded = std::max(recorded, op.recordedNs);
      // On a GPU timeline, where the op began in the job: the earliest member's recorded start.
      recordedStart = op.recordedClock == RecordedClock::kGpu && op.issueNs >= 0 && recordedStart >= 0
                          ? std::min(recordedStart, op.issueNs)
                          : -1;
    }
    if (recordedStart >= 0 && recordedStart != INT64_MAX) row.recordedStartUs = recordedStart * 1e-3;
    if (members.size() < 2) row.lastRank = -1;
    row.waitUs = members.size() < 2 ? 0 : lastArrival - firstArrival;
    row.moveUs = end - lastArrival;
    row.startUs = start;
    row.timeUs = longest * 1e-3;
    row.algbw = longest > 0 ? static_cast<double>(row.bytes) / static_cast<double>(longest) : 0;  // bytes/ns = GB/s
    row.busbw = row.algbw * busBandwidthFactor(ref.kind, row.nranks);
    if (in_.rateGBps > 0) row.efficiency = 100.0 * row.busbw / in_.rateGBps;
    if (recorded >= 0) {
      row.recordedUs = recorded * 1e-3;
      const bool comparable = comparableWithReplay(in_.workload->recordedClock);
      row.ratio = comparable && recorded > 0 ? static_cast<double>(longest) / static_cast<double>(recorded) : -1;
    }
    return row;
  }

 private:
  const ReportInput& in_;
};

// Per rank: the ops that waited (over 5 % of their time) among those it was a member of, the ones
// it started last in, and the wait of those.
class StragglerTally {
 public:
  void add(const OpRow& row, const std::vector<Member>& members) {
    if (row.lastRank < 0 || row.waitUs <= 0.05 * row.timeUs) return;
    for (const Member& m : members) ++ranks_[m.global].waitingOps;
    Rank& last = ranks_[row.lastRank];
    ++last.lastIn;
    last.waitUs += row.waitUs;
  }

  // Of the ranks last in at least 90 % of the waiting ops they were members of, the one that made
  // the others wait longest.
  Straggler find() const {
    Straggler out;
    double best = 0;
    for (const auto& [rank, r] : ranks_) {
      const double share = r.waitingOps ? static_cast<double>(r.lastIn) / static_cast<double>(r.waitingOps) : 0;
      if (share >= 0.9 && r.waitUs > best) {
        best = r.waitUs;
        out.rank = rank;
        out.lastIn = r.lastIn;
        out.waitingOps = r.waitingOps;
        out.waitUs = r.waitUs;
      }
    }
    if (out.rank < 0) {
      for (const auto& [rank, r] : ranks_) out.waitingOps = std::max(out.waitingOps, r.waitingOps);
    }
    return out;
  }

 private:
  struct Rank {
    uint64_t waitingOps = 0;
    uint64_t lastIn = 0;
    double waitUs = 0;
  };
  std::map<int, Rank> ranks_;
};

void addRows(const ReportInput& in, std::vector<OpRow>* rows, StragglerTally* tally) {
  const Workload& w = *in.workload;
  RowMaker maker(in);
  for (const CommIndex& c : indexComms(w)) {
    const CommGroup& comm = *c.comm;
    for (size_t k = 0; k < c.collectives[0].size(); ++k) {
      std::vector<Member> members;
      for (size_t r = 0; r < comm.members.size(); ++r) {
        if (k < c.collectives[r].size()) members.push_back({comm.members[r], c.collectives[r][k]});
      }
      const WorkOp& ref = w.ranks[comm.members[0]].ops[c.collectives[0][k]];
      for (int it = 0; it < in.iterations; ++it) {
        rows->push_back(maker.make(ref, comm, members, it));
        tally->add(rows->back(), members);
      }
    }
    for (const auto& [pair, sends] : c.sends) {
      auto recvs = c.recvs.find(pair);
      const int from = comm.members[pair.first], to = comm.members[pair.second];
      for (size_t k = 0; k < sends.size(); ++k) {
        std::vector<Member> members{{from, sends[k]}};
        if (recvs != c.recvs.end() && k < recvs->second.size()) members.push_back({to, recvs->second[k]});
        const WorkOp& ref = w.ranks[from].ops[sends[k]];
        for (int it = 0; it < in.iterations; ++it) {
          OpRow row = maker.make(ref, comm, members, it);
          row.ranks = fmt::format("{}->{}", from, to);
          tally->add(row, members);
          rows->push_back(std::move(row));
        }
      }
    }
  }
  std::stable_sort(rows->begin(), rows->end(), [](const OpRow& a, const OpRow& b) {
    return a.iteration != b.iteration ? a.iteration < b.iteration : a.startUs < b.startUs;
  });
}

std::vector<SummaryRow> summarize(const std::vector<OpRow>& rows) {
  struct Sums {
    SummaryRow row;
    double time = 0, busbw = 0, efficiency = 0, recorded = 0;
    uint64_t recordedCount = 0;
  };
  std::map<std::tuple<std::string, std::string, uint64_t>, Sums> groups;
  for (const OpRow& r : rows) {
    Sums& s = groups[{r.op, r.label, sizeBucket(r.bytes)}];
    s.row.op = r.op;
    s.row.label = r.label;
    s.row.bucketBytes = sizeBucket(r.bytes);
    s.row.count += 1;
    s.row.totalBytes += r.bytes;
    s.time += r.timeUs;
    s.busbw += r.busbw;
    s.efficiency += r.efficiency;
    if (r.recordedUs >= 0) {
      s.recorded += r.recordedUs;
      ++s.recordedCount;
    }
  }
  std::vector<SummaryRow> out;
  for (auto& [key, s] : groups) {
    double n = static_cast<double>(s.row.count);
    s.row.meanTimeUs = s.time / n;
    s.row.meanBusbw = s.busbw / n;
    s.row.meanEfficiency = s.efficiency >= 0 ? s.efficiency / n : -1;
    s.row.meanRecordedUs = s.recordedCount ? s.recorded / static_cast<double>(s.recordedCount) : -1;
    out.push_back(s.row);
  }
  return out;
}

}  // namespace

ReplayReport buildReport(const ReportInput& in) {
  ReplayReport report;
  const Workload& w = *in.workload;
  report.description = w.description;
  report.recordedClock = w.recordedClock;
  report.worldSize = w.worldSize;
  report.iterations = in.iterations;
  report.warmup = in.warmup;
  report.rateGBps = in.rateGBps;
  report.ranks = in.counters;
  report.endpoints = in.endpoints;
  if (static_cast<int>(in.endpoints.size()) == w.worldSize)
    report.traffic = buildHostTraffic(in.endpoints, in.counters);
  for (int g = 0; g < w.worldSize; ++g) {
    const RankCounters& c = in.counters[g];
    int64_t start = c.runStartNs;
    if (in.warmup > 0) {
      size_t per = w.ranks[g].ops.size();
      start = c.runEndNs;
      for (size_t i = static_cast<size_t>(in.warmup) * per; i < in.timings[g].size(); ++i) {
        start = std::min(start, in.timings[g][i].startNs);
      }
    }
    report.endToEndSeconds = std::max(report.endToEndSeconds, (c.runEndNs - start) * 1e-9);
  }
  StragglerTally tally;
  addRows(in, &report.rows, &tally);
  report.summary = summarize(report.rows);
  report.steps = stepTimes(in.timings, in.counters, in.warmup, in.iterations);
  report.straggler = tally.find();
  report.slowOps = findSlowOps(report.rows, w, in.endpoints);
  report.timeline = scoreTimelines(w, in.timings, in.counters, in.warmup, in.iterations, in.paced);
  return report;
}

}  // namespace nshim::phynet
