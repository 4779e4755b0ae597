// Layout search and the same-sequence-on-every-rank check (rules in layout_infer.h).
#include "tools/inspect/layout_infer.h"

#include <algorithm>

#include "tools/inspect/distribution_output.h"
#include "workload/aicb_workload.h"
#include "workload/simai_workload.h"
#include "workload/workload_transform.h"

namespace nshim::tools {
namespace {

using workload::GroupKind;
using workload::OpKind;

std::vector<int> divisors(int n, int fixed) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0 && (fixed == 0 || fixed == d)) out.push_back(d);
  }
  return out;
}

struct Fit {
  bool ok = false;
  int score = 0;  // communicators whose kind equals phynet's shape label
  std::map<uint64_t, GroupKind> kindOf;
};

Fit fitLayout(const workload::RankLayout& layout, const std::vector<const workload::CommGroup*>& comms,
              const LayoutTarget& target, std::vector<bool>* fitsSome) {
  Fit fit;
  fit.ok = true;
  for (size_t i = 0; i < comms.size(); ++i) {
    const workload::CommGroup& c = *comms[i];
    bool found = false;
    for (GroupKind kind : target.kinds) {
      if (layout.groupSize(kind) < 2 || !layout.inGroup(kind, c.members[0]) ||
          layout.groupMembers(kind, c.members[0]) != c.members) {
        continue;
      }
      const bool agrees = c.label == workload::groupKindLabel(kind);
      if (!found || agrees) {
        fit.kindOf[c.id] = kind;
        if (agrees) ++fit.score;
      }
      found = true;
      if (agrees) break;
    }
    if (found) (*fitsSome)[i] = true;
    fit.ok = fit.ok && found;
  }
  return fit;
}

Result<InferredJob> chooseLayout(const workload::Workload& w, const std::vector<const workload::CommGroup*>& comms,
                                 const LayoutTarget& target) {
  std::vector<bool> fitsSome(comms.size(), false);
  InferredJob best;
  int bestScore = -1;
  for (int tp : divisors(w.worldSize, target.tp)) {
    for (int pp : divisors(w.worldSize / tp, target.pipeline ? target.pp : 1)) {
      const int dp = w.worldSize / (tp * pp);
      for (int ep : divisors(dp, target.ep)) {
        workload::RankLayout layout{w.worldSize, tp, dp, ep, pp};
        Fit fit = fitLayout(layout, comms, target, &fitsSome);
        if (fit.ok && fit.score > bestScore) {
          bestScore = fit.score;
          best.layout = layout;
          best.kindOf = std::move(fit.kindOf);
        }
      }
    }
  }
  if (bestScore >= 0) return best;
  std::string kinds;
  for (GroupKind k : target.kinds) kinds += fmt::format("{}{}", kinds.empty() ? "" : ", ", workload::groupKindLabel(k));
  for (size_t i = 0; i < comms.size(); ++i) {
    if (fitsSome[i]) continue;
    return NS_ERROR(Code::kInvalidArgument,
                    "communicator {} (ranks {}) is not a {} group of any layout of {} ranks "
                    "(TP contiguous, DP strided by TP, EP dividing DP{}): {} workloads cannot express it",
                    workload::commName(*comms[i]), membersText(comms[i]->members), kinds, w.worldSize,
                    target.tp || target.ep || target.pp ? ", with the sizes given" : "", target.format);
  }
  return NS_ERROR(Code::kInvalidArgument,
                  "each communicator fits some layout of {} ranks, but no single layout fits "
                  "them all ({} groups: {}); give --tp / --ep to choose one",
                  w.worldSize, target.format, kinds);
}

std::string describeJobOp(const JobOp& op) {
  std::string text =
      fmt::format("{} on {} of {} bytes", workload::opKindName(op.kind), workload::groupKindLabel(op.group), op.bytes);
  if (op.root >= 0) text += fmt::format(" root {}", op.root);
  return text + " (" + op.source + ")";
}

// The ops a format can write: those its reader has a name for.
std::vector<OpKind> kindsNamedBy(const char* (*nameOf)(OpKind)) {
  std::vector<OpKind> kinds;
  for (const CollectiveDescriptor& d : kCollectiveDescriptors) {
    if (nameOf(d.kind) != nullptr) kinds.push_back(d.kind);
  }
  return kinds;
}

}  // namespace

LayoutTarget simAiTarget() {
  LayoutTarget t;
  t.format = "SimAI";
  t.kinds = {GroupKind::kTp, GroupKind::kDp, GroupKind::kEp, GroupKind::kDpEp};
  t.ops = kindsNamedBy(workload::simAiOpName);
  return t;
}

LayoutTarget aicbTarget() {
  LayoutTarget t;
  t.format = "AICB";
  t.kinds = {GroupKind::kTp,   GroupKind::kDp, GroupKind::kEp,   GroupKind::kDpEp,
             GroupKind::kEpTp, GroupKind::kPp, GroupKind::kWorld};
  t.ops = kindsNamedBy(workload::aicbCommTypeName);
  t.pipeline = true;
  t.anyBroadcastRoot = true;
  return t;
}

Result<InferredJob> inferJob(const workload::Workload& w, const LayoutTarget& target) {
  if (w.worldSize < 1) return NS_ERROR(Code::kInvalidArgument, "the input has no ranks");
  std::vector<const workload::CommGroup*> active;
  size_t dropped = 0;
  std::vector<bool> used(w.comms.size(), false);
  for (const workload::RankWork& rank : w.ranks) {
    for (const workload::WorkOp& op : rank.ops) {
      const workload::CommGroup* c = w.findComm(op.commId);
      if (c->members.size() < 2) ++dropped;
      else used[c - w.comms.data()] = true;
    }
  }
  for (size_t i = 0; i < w.comms.size(); ++i) {
    if (used[i]) active.push_back(&w.comms[i]);
  }
  NS_ASSIGN_OR_RETURN(InferredJob job, chooseLayout(w, active, target));
  if (dropped) job.notes.push_back(fmt::format("{} op(s) on one-rank communicators are left out", dropped));
  size_t merged = 0;
  for (size_t i = 0; i < active.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (active[j]->members == active[i]->members) {
        ++merged;
        break;
      }
    }
  }
  if (merged) {
    job.notes.push_back(
        fmt::format("{} communicator(s) have the same members as another and merge into one group "
                    "(sequence numbers run across them)",
                    merged));
  }

  size_t retyped = 0, notSum = 0;
  for (const workload::RankWork& rank : w.ranks) {
    size_t k = 0;
    for (const workload::WorkOp& op : rank.ops) {
      const workload::CommGroup* c = w.findComm(op.commId);
      if (c->members.size() < 2) continue;
      if (std::find(target.ops.begin(), target.ops.end(), op.kind) == target.ops.end()) {
        return NS_ERROR(Code::kInvalidArgument, "{}: {} on {}: {} workloads cannot express this op", op.source,
                        workload::opKindName(op.kind), workload::commName(*c), target.format);
      }
      JobOp j{op.kind, job.kindOf.at(c->id), op.bytes, op.root, op.computeNs, op.recordedNs, op.source.str()};
      if (op.kind == OpKind::kBroadcast && op.root != 0 && !target.anyBroadcastRoot) {
        return NS_ERROR(Code::kInvalidArgument, "{}: broadcast from root {}: {} broadcasts start at rank 0", op.source,
                        op.root, target.format);
      }
      if (rank.globalRank == 0) {
        workload::OpSize size = workload::sizeOp(op.kind, op.bytes, static_cast<int>(c->members.size()));
        retyped += size.count != op.count || size.type != op.type;
        notSum += op.reduce != ReduceKind::kSum && describe(op.kind).reduces;
        job.ops.push_back(std::move(j));
      } else {
        const JobOp* ref = k < job.ops.size() ? &job.ops[k] : nullptr;
        if (!ref || ref->kind != j.kind || ref->group != j.group || ref->bytes != j.bytes || ref->root != j.root) {
          return NS_ERROR(Code::kInvalidArgument,
                          "rank {} op #{} is {}, but rank 0's is {}: {} workloads give every "
                          "rank the same operations on its own groups",
                          rank.globalRank, k, describeJobOp(j),
                          ref ? describeJobOp(*ref) : "(none: rank 0 has fewer ops)", target.format);
        }
      }
      ++k;
    }
    if (rank.globalRank != 0 && k != job.ops.size()) {
      return NS_ERROR(Code::kInvalidArgument,
                      "rank {} has {} ops, rank 0 {}: {} workloads give every rank the same "
                      "operations",
                      rank.globalRank, k, job.ops.size(), target.format);
    }
  }
  if (retyped) {
    job.notes.push_back(
        fmt::format("{} op(s) change count / datatype: the format carries bytes only, phynet "
                    "re-derives them (float32 when the size allows, else uint8)",
                    retyped));
  }
  if (notSum) job.notes.push_back(fmt::format("{} reduction(s) other than sum become sum", notSum));
  job.notes.push_back(fmt::format("layout {}; compute gaps and times are rank 0's", job.layout.toString()));
  return job;
}

}  // namespace nshim::tools
