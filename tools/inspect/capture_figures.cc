// The capture's figures for compare (capture_figures.h): rows paired the way phynet's report pairs
// them (the k-th collective of each member of a communicator; the k-th send a->b with the k-th
// receive on b from a), and each rank's GPU timeline.
#include "tools/inspect/capture_figures.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "common/json_text.h"
#include "workload/iteration_period.h"
#include "workload/timeline_figures.h"

namespace nshim::tools {
namespace {

using workload::OpInterval;
using workload::RecordedClock;
using workload::TimelineFigures;
using workload::WorkOp;

struct Row {
  const WorkOp* ref = nullptr;
  std::string label;
  int nranks = 0;
  int64_t longestNs = -1;  // -1: some member's time is not comparable (not GPU or stated)
};

void addMember(Row* row, const WorkOp& op) {
  if (row->ref == nullptr) row->ref = &op;
  if (!workload::comparableWithReplay(op.recordedClock) || op.recordedNs < 0) {
    row->longestNs = INT64_MIN;
  } else if (row->longestNs != INT64_MIN) {
    row->longestNs = std::max(row->longestNs, op.recordedNs);
  }
}

std::vector<Row> captureRows(const workload::Workload& w) {
  std::vector<Row> rows;
  for (const workload::CommGroup& comm : w.comms) {
    std::map<int, std::vector<const WorkOp*>> collectives;                   // member -> its collectives
    std::map<std::pair<int, int>, std::vector<const WorkOp*>> sends, recvs;  // (from, to) comm ranks
    for (size_t r = 0; r < comm.members.size(); ++r) {
      const int g = comm.members[r];
      if (g < 0 || g >= static_cast<int>(w.ranks.size())) continue;
      for (const WorkOp& op : w.ranks[g].ops) {
        if (op.commId != comm.id) continue;
        if (op.kind == workload::OpKind::kSend) sends[{static_cast<int>(r), op.peer}].push_back(&op);
        else if (op.kind == workload::OpKind::kRecv) recvs[{op.peer, static_cast<int>(r)}].push_back(&op);
        else collectives[static_cast<int>(r)].push_back(&op);
      }
    }
    const size_t count = collectives.count(0) ? collectives[0].size() : 0;
    for (size_t k = 0; k < count; ++k) {
      Row row{nullptr, comm.label, static_cast<int>(comm.members.size()), -1};
      for (auto& [member, ops] : collectives) {
        if (k < ops.size()) addMember(&row, *ops[k]);
      }
      rows.push_back(row);
    }
    for (auto& [pair, list] : sends) {
      const std::vector<const WorkOp*>& matched = recvs[pair];
      for (size_t k = 0; k < list.size(); ++k) {
        Row row{nullptr, comm.label, static_cast<int>(comm.members.size()), -1};
        addMember(&row, *list[k]);
        if (k < matched.size()) addMember(&row, *matched[k]);
        rows.push_back(row);
      }
    }
  }
  return rows;
}

std::string figuresJson(const TimelineFigures& f) {
  return fmt::format(
      "{{\"comm_us\":{:.3f},\"exposed_us\":{:.3f},\"busy_us\":{:.3f},\"span_us\":{:.3f},\"idle_us\":{:.3f},"
      "\"overlap_pairs\":{},\"ops\":{}}}",
      f.commUs, f.exposedUs, f.busyUs, f.spanUs, f.idleUs, f.overlapPairs, f.ops);
}

std::string clockOf(const workload::Workload& w) {
  std::set<RecordedClock> clocks;
  for (const workload::RankWork& rank : w.ranks) {
    for (const WorkOp& op : rank.ops) clocks.insert(op.recordedClock);
  }
  clocks.erase(RecordedClock::kNone);
  if (clocks.empty()) return "none";
  return clocks.size() == 1 ? workload::recordedClockName(*clocks.begin()) : "mixed";
}

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

}  // namespace

Status writeCaptureFigures(const std::string& path, const std::string& source, const workload::Workload& w) {
  std::string out =
      fmt::format("{{\"capture\":{},\"description\":{},\"world_size\":{},\"recorded_clock\":{},\n\"ops\":[",
                  jsonQuoted(source), jsonQuoted(w.description), w.worldSize, jsonQuoted(clockOf(w)));
  bool first = true;
  for (const Row& row : captureRows(w)) {
    if (row.ref == nullptr) continue;
    out += fmt::format("{}\n{{\"op\":{},\"group\":{},\"nranks\":{},\"bytes\":{},\"time_us\":{}}}", first ? "" : ",",
                       jsonQuoted(workload::reportOpName(row.ref->kind)), jsonQuoted(row.label), row.nranks,
                       row.ref->bytes, row.longestNs >= 0 ? fmt::format("{:.3f}", row.longestNs * 1e-3) : "null");
    first = false;
  }
  std::string ranks, iterations, note;
  uint64_t overlap = 0;
  bool captured = true;
  std::vector<OpInterval> timeline;
  for (const workload::RankWork& rank : w.ranks) {
    if (!workload::capturedGpuTimeline(rank.ops, &timeline)) {
      captured = false;
      note = fmt::format("rank {}'s capture is not GPU-timed: no job timeline (capture with NCCLSHIM_GPU_TIMING=1)",
                         rank.globalRank);
      break;
    }
    const TimelineFigures whole = workload::timelineFigures(timeline);
    overlap += whole.overlapPairs;
    ranks +=
        fmt::format("{}{{\"rank\":{},\"capture\":{}}}", ranks.empty() ? "" : ",", rank.globalRank, figuresJson(whole));
    const workload::IterationPeriod period = workload::findIterationPeriod(rank);
    for (size_t k = 0; period.found && k < period.iterations; ++k) {
      const size_t begin = period.firstBoundary + k * period.period;
      if (begin + period.period > timeline.size()) break;
      const TimelineFigures f =
          workload::timelineFigures(std::span<const OpInterval>(timeline).subspan(begin, period.period));
      iterations += fmt::format("{}{{\"rank\":{},\"iteration\":{},\"capture\":{}}}", iterations.empty() ? "" : ",",
                                rank.globalRank, k, figuresJson(f));
    }
  }
  if (!captured) ranks.clear(), iterations.clear(), overlap = 0;
  out += fmt::format(
      "],\n\"timeline\":{{\"captured\":{},\"note\":{},\"capture_overlap_pairs\":{},\"ranks\":[{}],"
      "\"iterations\":[{}]}}}}\n",
      captured ? "true" : "false", jsonQuoted(note), overlap, ranks, iterations);
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "w"));
  if (!file) return NS_ERROR(Code::kSystemError, "{}: cannot write: {}", path, std::strerror(errno));
  const bool written = std::fwrite(out.data(), 1, out.size(), file.get()) == out.size();
  if (!written || std::fclose(file.release()) != 0) {
    return NS_ERROR(Code::kSystemError, "{}: cannot write: {}", path, std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace nshim::tools
