// Report building: ops are matched across ranks the same way the validation pairs them (the k-th
// collective of each member of a communicator; the k-th send a->b with the k-th receive on b from a).
#include "phynet/report.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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
  std::vector<std::vector<uint32_t>> collectives;                 // per comm rank: op indices
  std::map<std::pair<int, int>, std::vector<uint32_t>> sends;     // (from, to) comm ranks
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
    const OpDecision decision = decisionOf(ref, in_.collectives, row.nranks, nodesOf(comm));
    row.algorithm = decision.algorithm;
    row.channels = decision.channels;
    row.protocol = protocolName(decision.protocol);
    int64_t longest = 0, recorded = -1, recordedStart = INT64_MAX;
    bool comparable = true;
    double start = -1;
    // Arrival: each member's start and end on a clock all members share (absolute on one host, else
    // since each rank's run start, which the ranks passed together).
    int64_t firstStart = INT64_MAX, lastStart = INT64_MIN, lastEnd = INT64_MIN;
    for (const Member& m : members) {
      const WorkOp& op = in_.workload->ranks[m.global].ops[m.index];
      size_t perIteration = in_.workload->ranks[m.global].ops.size();
      const OpTiming& t = in_.timings[m.global][(it + in_.warmup) * perIteration + m.index];
      longest = std::max(longest, t.endNs - t.startNs);
      double s = (t.startNs - in_.counters[m.global].runStartNs) * 1e-3;
      start = start < 0 ? s : std::min(start, s);
      if (op.recordedNs > recorded) {
        recorded = op.recordedNs;
        row.recordedClock = op.recordedClock;
      }
      comparable = comparable && comparableWithReplay(op.recordedClock);
      recordedStart = op.recordedClock == RecordedClock::kGpu && op.issueNs >= 0 && recordedStart >= 0
                          ? std::min(recordedStart, op.issueNs)
                          : -1;
      const int64_t origin = in_.sharedClock ? 0 : in_.counters[m.global].runStartNs;
      if (t.startNs - origin > lastStart) {
        lastStart = t.startNs - origin;
        row.lastRank = m.global;
      }
      firstStart = std::min(firstStart, t.startNs - origin);
      lastEnd = std::max(lastEnd, t.endNs - origin);
    }
    row.startUs = start;
    row.timeUs = longest * 1e-3;
    row.algbw = longest > 0 ? static_cast<double>(row.bytes) / static_cast<double>(longest) : 0;  // bytes/ns = GB/s
    row.busbw = row.algbw * busBandwidthFactor(ref.kind, row.nranks);
    if (in_.rateGBps > 0) row.efficiency = 100.0 * row.busbw / in_.rateGBps;
    if (recorded >= 0) {
      row.recordedUs = recorded * 1e-3;
      row.ratio = recorded > 0 && comparable ? static_cast<double>(longest) / static_cast<double>(recorded) : -1;
    }
    if (recordedStart >= 0 && recordedStart != INT64_MAX) row.recordedStartUs = recordedStart * 1e-3;
    if (members.size() > 1) {
      row.arrivalWaitUs = (lastStart - firstStart) * 1e-3;
      row.dataUs = std::max<int64_t>(0, lastEnd - lastStart) * 1e-3;
    } else {
      row.lastRank = -1;
    }
    return row;
  }

 private:
  const ReportInput& in_;
};

void addRows(const ReportInput& in, std::vector<OpRow>* rows) {
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
      for (int it = 0; it < in.iterations; ++it) rows->push_back(maker.make(ref, comm, members, it));
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
          rows->push_back(std::move(row));
        }
      }
    }
  }
  std::stable_sort(rows->begin(), rows->end(), [](const OpRow& a, const OpRow& b) {
    return a.iteration != b.iteration ? a.iteration < b.iteration : a.startUs < b.startUs;
  });
}

// Whether the arrival wait of `row` is worth naming the last rank for.
bool waitedSignificantly(const OpRow& row) {
  return row.arrivalWaitUs >= StragglerFinding::kSignificantWaitUs && row.arrivalWaitUs >= 0.1 * row.timeUs;
}

std::vector<SummaryRow> summarize(const std::vector<OpRow>& rows) {
  struct Sums {
    SummaryRow row;
    double time = 0, busbw = 0, efficiency = 0, recorded = 0, cpuCall = 0, wait = 0, data = 0;
    uint64_t recordedCount = 0, cpuCallCount = 0, waitCount = 0;
    std::set<int> lastRanks;  // over the ops where ranks waited significantly
    uint64_t waited = 0;
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
    if (r.recordedUs >= 0 && comparableWithReplay(r.recordedClock)) {
      s.recorded += r.recordedUs;
      ++s.recordedCount;
    } else if (r.recordedUs >= 0 && r.recordedClock == RecordedClock::kCpuCall) {
      s.cpuCall += r.recordedUs;
      ++s.cpuCallCount;
    }
    if (r.arrivalWaitUs >= 0) {
      s.wait += r.arrivalWaitUs;
      s.data += r.dataUs;
      ++s.waitCount;
    }
    if (waitedSignificantly(r)) {
      s.lastRanks.insert(r.lastRank);
      ++s.waited;
    }
  }
  std::vector<SummaryRow> out;
  for (auto& [key, s] : groups) {
    double n = static_cast<double>(s.row.count);
    s.row.meanTimeUs = s.time / n;
    s.row.meanBusbw = s.busbw / n;
    s.row.meanEfficiency = s.efficiency >= 0 ? s.efficiency / n : -1;
    s.row.meanRecordedUs = s.recordedCount ? s.recorded / static_cast<double>(s.recordedCount) : -1;
    s.row.meanCpuCallUs = s.cpuCallCount ? s.cpuCall / static_cast<double>(s.cpuCallCount) : -1;
    if (s.waitCount) {
      s.row.meanArrivalWaitUs = s.wait / static_cast<double>(s.waitCount);
      s.row.meanDataUs = s.data / static_cast<double>(s.waitCount);
    }
    if (s.lastRanks.size() == 1) s.row.lastRank = *s.lastRanks.begin();
    out.push_back(s.row);
  }
  return out;
}

// Whether global rank `g` took part in `row`: one of a send/recv pair ("3->1"), else a member of
// the row's communicator.
bool tookPart(const OpRow& row, int g, const Workload& w) {
  if (!row.ranks.empty()) {
    const size_t arrow = row.ranks.find("->");
    return arrow != std::string::npos &&
           (row.ranks.substr(0, arrow) == std::to_string(g) || row.ranks.substr(arrow + 2) == std::to_string(g));
  }
  const CommGroup* comm = w.findComm(row.commId);
  return comm != nullptr && std::find(comm->members.begin(), comm->members.end(), g) != comm->members.end();
}

// The straggler: the one rank that arrived last at every op it took part in where ranks waited (ops
// without it may wait too, as its lateness spreads); its figures are over the ops it was last in.
StragglerFinding findStraggler(const std::vector<OpRow>& rows, const Workload& w) {
  StragglerFinding f;
  std::map<int, uint64_t> last;
  std::vector<const OpRow*> waited;
  for (const OpRow& r : rows) {
    if (r.arrivalWaitUs < 0) continue;
    ++f.rows;
    if (!waitedSignificantly(r)) continue;
    waited.push_back(&r);
    ++last[r.lastRank];
  }
  f.rowsWaited = waited.size();
  if (waited.empty()) return f;
  for (const auto& [rank, count] : last) f.lastArrivals.emplace_back(rank, count);
  std::stable_sort(f.lastArrivals.begin(), f.lastArrivals.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<int> consistent;
  for (const auto& [rank, count] : f.lastArrivals) {
    const bool always = std::all_of(waited.begin(), waited.end(), [&, rank = rank](const OpRow* r) {
      return r->lastRank == rank || !tookPart(*r, rank, w);
    });
    if (always) consistent.push_back(rank);
  }
  if (consistent.size() == 1) f.rank = consistent.front();
  for (const OpRow* r : waited) {
    if (f.rank >= 0 && r->lastRank != f.rank) continue;
    ++f.rowsCaused;
    f.totalWaitUs += r->arrivalWaitUs;
    f.meanDataUs += r->dataUs;
  }
  f.meanWaitUs = f.totalWaitUs / static_cast<double>(f.rowsCaused);
  f.meanDataUs /= static_cast<double>(f.rowsCaused);
  return f;
}

// "gpu", "cpu_call", "stated", "mixed" or "none": what the workload's recorded times are.
std::string recordedClockOf(const Workload& w) {
  std::set<RecordedClock> clocks;
  for (const RankWork& rank : w.ranks) {
    for (const WorkOp& op : rank.ops) clocks.insert(op.recordedClock);
  }
  clocks.erase(RecordedClock::kNone);
  if (clocks.empty()) return "none";
  return clocks.size() == 1 ? recordedClockName(*clocks.begin()) : "mixed";
}

}  // namespace

ReplayReport buildReport(const ReportInput& in) {
  ReplayReport report;
  const Workload& w = *in.workload;
  report.description = w.description;
  report.worldSize = w.worldSize;
  report.iterations = in.iterations;
  report.warmup = in.warmup;
  report.rateGBps = in.rateGBps;
  report.ranks = in.counters;
  report.endpoints = in.endpoints;
  if (static_cast<int>(in.endpoints.size()) == w.worldSize) report.traffic = buildHostTraffic(in.endpoints, in.counters);
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
  addRows(in, &report.rows);
  report.summary = summarize(report.rows);
  report.steps = stepTimes(in.timings, in.counters, in.warmup, in.iterations);
  report.recordedClock = recordedClockOf(w);
  report.straggler = findStraggler(report.rows, w);
  report.timeline = scoreTimelines(w, in.timings, in.counters, in.warmup, in.iterations, in.paced);
  return report;
}

}  // namespace nshim::phynet
