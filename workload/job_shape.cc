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
  std::map<uint64_t, uint64_t> firstCount;  // per communicator: the first exchange's count + 1
  const int world = static_cast<int>(traces.files.size());
  for (const trace::TraceFile& file : traces.files) {
    for (const trace::CommEntry& entry : file.comms) {
      const trace::CommRecord& c = entry.record;
      if (c.event != trace::CommEvent::kInit && c.event != trace::CommEvent::kSplit) continue;
      if (c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks || c.globalRank < 0 || c.globalRank >= world) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}:{}: comm {}: rank {} of {} at global rank {} does not fit a job of "
                        "{} ranks",
                        file.path, entry.line, commName(c.commId), c.rank, c.nranks, c.globalRank, world);
      }
      CommFacts& facts = comms[c.commId];
      if (facts.members.empty()) facts.members.assign(c.nranks, -1);
      if (static_cast<int>(facts.members.size()) != c.nranks) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: comm {}: nranks {} here, {} in another file", file.path,
                        entry.line, commName(c.commId), c.nranks, facts.members.size());
      }
      facts.members[c.rank] = c.globalRank;
    }
    for (const trace::OpEntry& entry : file.ops) {
      if (entry.record.commId == 0) continue;
      auto it = comms.find(entry.record.commId);
      if (it == comms.end()) continue;  // trace_validate reports ops on unknown communicators
      it->second.carriesOps = true;
      const trace::OpRecord& op = entry.record;
      if (op.op == trace::OpCode::kSend || op.op == trace::OpCode::kAlltoAll) {
        uint64_t& first = firstCount[op.commId];
        if (first == 0) first = op.count + 1;  // 0: none yet
        it->second.evenExchange = it->second.evenExchange && first == op.count + 1;
        it->second.sendsToSelf = it->second.sendsToSelf || (op.op == trace::OpCode::kSend && op.peer == op.rank);
      }
      it->second.pointToPointOnly = it->second.pointToPointOnly && isPointToPoint(entry.record.op);
      it->second.exchanges =
          it->second.exchanges || isPointToPoint(entry.record.op) || entry.record.op == trace::OpCode::kAlltoAll;
    }
  }
  for (const auto& [id, facts] : comms) {
    if (std::count(facts.members.begin(), facts.members.end(), -1) > 0) {
      return NS_ERROR(Code::kInvalidArgument,
                      "comm {}: {} of its {} members have no file naming them (every rank's file "
                      "is needed to recover the job's shape)",
                      commName(id), std::count(facts.members.begin(), facts.members.end(), -1), facts.members.size());
    }
  }
  return comms;
}

// The group kind of `facts` in `layout`, or false. Of the kinds whose group it is, an exchanging
// communicator (all-to-all, sends) takes expert or pipeline parallel first, any other tensor, data,
// expert-data or world first; a pipeline group carries only sends and receives. *agrees: it
// exchanges and is an expert or pipeline group, as its ops suggest.
bool fitKind(const RankLayout& layout, const CommFacts& facts, GroupKind* kind, bool* agrees) {
  static constexpr GroupKind kReducing[] = {GroupKind::kTp,    GroupKind::kCp,   GroupKind::kDp,
                                            GroupKind::kDpCp,  GroupKind::kDpEp, GroupKind::kEpTp,
                                            GroupKind::kWorld, GroupKind::kEp,   GroupKind::kPp};
  static constexpr GroupKind kExchanging[] = {GroupKind::kEp,   GroupKind::kPp,   GroupKind::kCp,
                                              GroupKind::kEpTp, GroupKind::kTp,   GroupKind::kDp,
                                              GroupKind::kDpCp, GroupKind::kDpEp, GroupKind::kWorld};
  // An even ring of sends (no sender addressing itself) is pipeline or context parallel, not the
  // token all-to-all, whose counts follow the data and which sends each rank its own block.
  const bool evenRing = facts.pointToPointOnly && facts.evenExchange && !facts.sendsToSelf;
  const int first = facts.members.front();
  for (GroupKind candidate : facts.exchanges ? kExchanging : kReducing) {
    if (candidate == GroupKind::kPp && !facts.pointToPointOnly) continue;
    if ((candidate == GroupKind::kCp || candidate == GroupKind::kDpCp) && layout.cp == 1) continue;
    if ((candidate == GroupKind::kEp || candidate == GroupKind::kDpEp || candidate == GroupKind::kEpTp) &&
        layout.ep == 1) {
      continue;  // no expert groups in this layout
    }
    if (candidate == GroupKind::kEpTp && layout.tp == 1) continue;  // the expert group itself
    if (layout.groupMembers(candidate, first) == facts.members) {
      *kind = candidate;
      *agrees = facts.exchanges && (candidate == GroupKind::kPp || (candidate == GroupKind::kEp && !evenRing) ||
                                    (candidate == GroupKind::kCp && facts.evenExchange));
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

}  // namespace

std::string sizesText(const RankLayout& layout) {
  if (layout.cp > 1) return fmt::format("TP={} CP={} DP={} PP={}", layout.tp, layout.cp, layout.dp, layout.pp);
  if (layout.ep > 1) return fmt::format("TP={} DP={} EP={} PP={}", layout.tp, layout.dp, layout.ep, layout.pp);
  return fmt::format("TP={} DP={} PP={}", layout.tp, layout.dp, layout.pp);
}

std::string shapeText(const RankLayout& layout) {
  return fmt::format("{} ({} ranks)", sizesText(layout), layout.world);
}

std::string JobShape::toString() const { return shapeText(layout); }

Result<JobShape> recoverJobShape(const trace::TraceSet& traces, const ShapeOptions& options) {
  const int world = static_cast<int>(traces.files.size());
  if (world < 1) return NS_ERROR(Code::kInvalidArgument, "no trace files");
  for (int rank = 0; rank < world; ++rank) {
    if (traces.files[rank].globalRank() != rank) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: global rank {} where rank {} was expected: the shape needs one file "
                      "per rank 0..{}",
                      traces.files[rank].path, traces.files[rank].globalRank(), rank, world - 1);
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
        return NS_ERROR(Code::kInvalidArgument, "comm {}: member {} is not a rank of the {}-rank job", commName(use.id),
                        member, world);
      }
    }
    byId[use.id] = &use;
  }
  std::map<uint64_t, CommFacts> table;
  for (const auto& [id, use] : byId) table.emplace(id, *use);
  const std::map<uint64_t, CommFacts>* comms = &table;

  struct Fit {
    RankLayout layout;
    int agreeing = 0;     // exchanging communicators that are expert, pipeline or context groups
    int worldAsData = 0;  // communicators of every rank that are its data-parallel group
  };
  std::vector<Fit> fits;
  std::vector<std::string> misfits;  // per layout tried: the first communicator that fits none of its groups
  for (int tp = 1; tp <= world; ++tp) {
    if (world % tp != 0 || (options.tp && tp != options.tp)) continue;
    for (int cp = 1; cp <= world / tp; ++cp) {
      if (world / tp % cp != 0 || (options.cp && cp != options.cp)) continue;
      for (int pp = 1; pp <= world / tp / cp; ++pp) {
        if (world / tp / cp % pp != 0 || (options.pp && pp != options.pp)) continue;
        const int dp = world / tp / cp / pp;
        for (int ep = 1; ep <= (cp > 1 ? 1 : dp); ++ep) {  // expert groups are not laid out with CP
          if (dp % ep != 0 || (options.ep && ep != options.ep)) continue;
          RankLayout layout;
          layout.world = world;
          layout.tp = tp;
          layout.cp = cp;
          layout.pp = pp;
          layout.dp = dp;
          layout.ep = ep;
          std::string misfit;
          int worldAsData = 0;
          int agreeing = 0;
          bool expertExchange = false;   // an exchanging communicator is an expert group
          bool contextExchange = false;  // one is a context-parallel group
          for (const auto& [id, facts] : *comms) {
            if (!facts.carriesOps || facts.members.size() < 2) continue;
            GroupKind kind;
            bool agrees = false;
            if (!fitKind(layout, facts, &kind, &agrees)) {
              misfit =
                  fmt::format("{}: comm {} (members {})", sizesText(layout), commName(id), membersText(facts.members));
              break;
            }
            agreeing += agrees ? 1 : 0;
            expertExchange = expertExchange || (agrees && kind == GroupKind::kEp);
            contextExchange = contextExchange || (agrees && kind == GroupKind::kCp);
            worldAsData +=
                (kind == GroupKind::kDp || kind == GroupKind::kDpCp) && static_cast<int>(facts.members.size()) == world
                    ? 1
                    : 0;
          }
          if (!misfit.empty()) {
            if (ep == 1) misfits.push_back(misfit);                 // one line per TP x PP: the expert sizes add little
          } else if ((ep == 1 || expertExchange || options.ep) &&   // experts only where an all-to-all needs them
                     (cp == 1 || contextExchange || options.cp)) {  // context groups where an exchange needs them
            fits.push_back(Fit{layout, agreeing, worldAsData});
          }
        }
      }
    }
  }
  if (fits.empty()) {
    std::string tried;
    for (size_t i = 0; i < misfits.size() && i < 6; ++i) tried += "\n  " + misfits[i];
    return NS_ERROR(Code::kInvalidArgument,
                    "the job's shape cannot be recovered: no TP x DP x PP layout (EP "
                    "dividing DP) of {} ranks has every communicator as one of its groups (tensor: consecutive "
                    "ranks; data: strided by TP; expert: a block of the data group; pipeline: strided by TP x DP, "
                    "sends and receives only).{}{}",
                    world,
                    misfits.empty() ? ""
                                    : " Each layout tried, and a "
                                      "communicator that fits none of its groups:",
                    tried);
  }
  // The layouts where the most exchanging communicators are expert or pipeline groups, then where
  // the most groups of every rank are data parallel; of those, per TP x PP, the smallest EP.
  auto rank = [](const Fit& fit) { return std::make_pair(fit.agreeing, fit.worldAsData); };
  std::pair<int, int> best(0, 0);
  for (const Fit& fit : fits) best = std::max(best, rank(fit));
  std::vector<RankLayout> chosen;
  for (const Fit& fit : fits) {
    if (rank(fit) != best) continue;
    const bool sameSizes = !chosen.empty() && chosen.back().tp == fit.layout.tp && chosen.back().cp == fit.layout.cp &&
                           chosen.back().pp == fit.layout.pp;
    if (!sameSizes) chosen.push_back(fit.layout);  // EP ascends within a TP x PP
  }
  if (chosen.size() > 1) {
    std::string candidates;
    for (const RankLayout& layout : chosen) candidates += (candidates.empty() ? "" : ", ") + sizesText(layout);
    return NS_ERROR(Code::kInvalidArgument,
                    "the job's shape is ambiguous: {} all fit its communicators (the groups "
                    "that would tell them apart carry no ops, or a ring / an even all-to-all may be context, "
                    "pipeline or expert parallel); choose with --tp, --pp, --ep or --cp",
                    candidates);
  }

  JobShape shape;
  shape.layout = chosen.front();
  for (const auto& [id, facts] : *comms) {
    ShapedComm comm;
    comm.id = id;
    comm.members = facts.members;
    comm.carriesOps = facts.carriesOps;
    if (facts.members.size() == 1) {
      comm.fitted = false;
    } else {
      bool agrees = false;
      comm.fitted = fitKind(shape.layout, facts, &comm.kind, &agrees);
    }
    shape.comms.emplace(id, std::move(comm));
  }
  return shape;
}

}  // namespace nshim::workload
