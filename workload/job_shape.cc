// Recovering TP x DP x PP from the communicators' members (job_shape.h).
#include "workload/job_shape.h"

#include <fmt/format.h>

#include <algorithm>

namespace nshim::workload {
namespace {

using CommFacts = CommUse;

std::string commName(uint64_t id) { return fmt::format("0x{:016x}", id); }

bool isPointToPoint(trace::OpCode op) { return op == trace::OpCode::kSend || op == trace::OpCode::kRecv; }

Result<std::map<uint64_t, CommFacts>> readComms(const trace::TraceSet& traces) {
  std::map<uint64_t, CommFacts> comms;
  const int world = static_cast<int>(traces.files.size());
  for (const trace::TraceFile& file : traces.files) {
    for (const trace::CommEntry& entry : file.comms) {
      const trace::CommRecord& c = entry.record;
      if (c.event != trace::CommEvent::kInit && c.event != trace::CommEvent::kSplit) continue;
      if (c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks || c.globalRank < 0 || c.globalRank >= world) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: comm {}: rank {} of {} at global rank {} does not fit a job of "
                                         "{} ranks", file.path, entry.line, commName(c.commId), c.rank,
                                         c.nranks, c.globalRank, world);
      }
      CommFacts& facts = comms[c.commId];
      if (facts.members.empty()) facts.members.assign(c.nranks, -1);
      if (static_cast<int>(facts.members.size()) != c.nranks) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: comm {}: nranks {} here, {} in another file", file.path, entry.line,
                                         commName(c.commId), c.nranks, facts.members.size());
      }
      facts.members[c.rank] = c.globalRank;
    }
    for (const trace::OpEntry& entry : file.ops) {
      if (entry.record.commId == 0) continue;
      auto it = comms.find(entry.record.commId);
      if (it == comms.end()) continue;  // trace_validate reports ops on unknown communicators
      it->second.carriesOps = true;
      it->second.pointToPointOnly = it->second.pointToPointOnly && isPointToPoint(entry.record.op);
    }
  }
  for (const auto& [id, facts] : comms) {
    if (std::count(facts.members.begin(), facts.members.end(), -1) > 0) {
      return NS_ERROR(Code::kInvalidArgument, "comm {}: {} of its {} members have no file naming them (every rank's file "
                                       "is needed to recover the job's shape)", commName(id),
                                       std::count(facts.members.begin(), facts.members.end(), -1),
                                       facts.members.size());
    }
  }
  return comms;
}

// The group kind of `members` in `layout`, or false. A group of every rank is data parallel when
// the layout's DP group is the world, else "world"; a pipeline group carries only point-to-point.
bool fitKind(const RankLayout& layout, const CommFacts& facts, GroupKind* kind) {
  const int first = facts.members.front();
  for (GroupKind candidate : {GroupKind::kTp, GroupKind::kDp, GroupKind::kPp, GroupKind::kWorld}) {
    if (candidate == GroupKind::kPp && !facts.pointToPointOnly) continue;
    if (layout.groupMembers(candidate, first) == facts.members) {
      *kind = candidate;
      return true;
    }
  }
  return false;
}

std::string membersText(const std::vector<int>& members) {
  std::string text;
  for (size_t i = 0; i < members.size() && i < 16; ++i) text += (i ? "," : "") + std::to_string(members[i]);
  if (members.size() > 16) text += fmt::format(",... ({} ranks)", members.size());
  return text;
}

std::string sizesText(const RankLayout& layout) {
  return fmt::format("TP={} DP={} PP={}", layout.tp, layout.dp, layout.pp);
}

}  // namespace

std::string JobShape::toString() const {
  return fmt::format("{} ({} ranks)", sizesText(layout), layout.world);
}

Result<JobShape> recoverJobShape(const trace::TraceSet& traces, const ShapeOptions& options) {
  const int world = static_cast<int>(traces.files.size());
  if (world < 1) return NS_ERROR(Code::kInvalidArgument, "no trace files");
  for (int rank = 0; rank < world; ++rank) {
    if (traces.files[rank].globalRank() != rank) {
      return NS_ERROR(Code::kInvalidArgument, "{}: global rank {} where rank {} was expected: the shape needs one file "
                                       "per rank 0..{}", traces.files[rank].path, traces.files[rank].globalRank(),
                                       rank, world - 1);
    }
  }
  Result<std::map<uint64_t, CommFacts>> comms = readComms(traces);
  if (!comms.ok()) return comms.status();
  std::vector<CommUse> uses;
  for (auto& [id, facts] : *comms) {
    facts.id = id;
    uses.push_back(std::move(facts));
  }
  return recoverJobShape(world, uses, options);
}

Result<JobShape> recoverJobShape(int world, const std::vector<CommUse>& uses, const ShapeOptions& options) {
  if (world < 1) return NS_ERROR(Code::kInvalidArgument, "a job of no ranks");
  std::map<uint64_t, const CommUse*> byId;
  for (const CommUse& use : uses) {
    if (use.members.empty()) return NS_ERROR(Code::kInvalidArgument, "comm {} has no members", commName(use.id));
    for (int member : use.members) {
      if (member < 0 || member >= world) {
        return NS_ERROR(Code::kInvalidArgument, "comm {}: member {} is not a rank of the {}-rank job",
                        commName(use.id), member, world);
      }
    }
    byId[use.id] = &use;
  }
  std::map<uint64_t, CommFacts> table;
  for (const auto& [id, use] : byId) table.emplace(id, *use);
  const std::map<uint64_t, CommFacts>* comms = &table;

  std::vector<RankLayout> fits;
  std::vector<std::string> misfits;  // per layout tried: the first communicator that fits none of its groups
  for (int tp = 1; tp <= world; ++tp) {
    if (world % tp != 0 || (options.tp && tp != options.tp)) continue;
    for (int pp = 1; pp <= world / tp; ++pp) {
      if (world / tp % pp != 0 || (options.pp && pp != options.pp)) continue;
      RankLayout layout;
      layout.world = world;
      layout.tp = tp;
      layout.pp = pp;
      layout.dp = world / tp / pp;
      std::string misfit;
      bool everyRankIsTp = false;
      for (const auto& [id, facts] : *comms) {
        if (!facts.carriesOps || facts.members.size() < 2) continue;
        GroupKind kind;
        if (!fitKind(layout, facts, &kind)) {
          misfit = fmt::format("{}: comm {} (members {})", sizesText(layout), commName(id),
                               membersText(facts.members));
          break;
        }
        everyRankIsTp = everyRankIsTp || (kind == GroupKind::kTp && static_cast<int>(facts.members.size()) == world);
      }
      if (!misfit.empty()) {
        misfits.push_back(misfit);
      } else if (!(everyRankIsTp && options.tp == 0)) {  // a group of every rank is data parallel
        fits.push_back(layout);
      }
    }
  }
  if (fits.empty()) {
    std::string tried;
    for (size_t i = 0; i < misfits.size() && i < 6; ++i) tried += "\n  " + misfits[i];
    return NS_ERROR(Code::kInvalidArgument, "the job's shape cannot be recovered: no TP x DP x PP layout of {} ranks has "
                                     "every communicator as one of its groups (tensor: consecutive ranks; data: "
                                     "strided by TP; pipeline: strided by TP x DP, sends and receives only).{}{}",
                                     world, misfits.empty() ? "" : " Each layout tried, and a communicator that "
                                     "fits none of its groups:", tried);
  }
  if (fits.size() > 1) {
    std::string candidates;
    for (const RankLayout& layout : fits) candidates += (candidates.empty() ? "" : ", ") + sizesText(layout);
    return NS_ERROR(Code::kInvalidArgument, "the job's shape is ambiguous: {} all fit its communicators (the groups that "
                                     "would tell them apart carry no ops); choose with --tp and --pp",
                                     candidates);
  }

  JobShape shape;
  shape.layout = fits.front();
  for (const auto& [id, facts] : *comms) {
    ShapedComm comm;
    comm.id = id;
    comm.members = facts.members;
    comm.carriesOps = facts.carriesOps;
    if (facts.members.size() == 1) {
      comm.fitted = false;
    } else {
      comm.fitted = fitKind(shape.layout, facts, &comm.kind);
    }
    shape.comms.emplace(id, std::move(comm));
  }
  return shape;
}

}  // namespace nshim::workload
