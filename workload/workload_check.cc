// Cross-rank validation of a workload. One pass sorts every op into per-communicator, per-member
// lists of collectives and per-pair lists of sends and receives; the lists are then compared
// position by position.
#include "workload/workload_check.h"

#include <map>
#include <unordered_map>
#include <utility>

#include "workload/p2p_order_check.h"
#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

struct CommLists {
  const CommGroup* comm = nullptr;
  std::unordered_map<int, int> rankOf;                              // global -> comm rank
  std::vector<std::vector<const WorkOp*>> collectives;              // per comm rank
  std::map<std::pair<int, int>, std::vector<const WorkOp*>> sends;  // (from, to) in the sender's order
  std::map<std::pair<int, int>, std::vector<const WorkOp*>> recvs;  // (from, to) in the receiver's order
};

struct Finding {
  size_t position = SIZE_MAX;
  std::string message;
};

bool sameCollective(const WorkOp& a, const WorkOp& b) {
  return a.kind == b.kind && a.count == b.count && a.type == b.type && a.root == b.root && a.bytes == b.bytes &&
         (a.reduce == b.reduce || !describe(a.kind).reduces);
}

// One op of global rank `g` on `comm`, where it is comm rank `self` (-1: not a member): membership,
// root / peer inside the communicator, the size limit and the bytes rule.
Status checkOpShape(int g, const WorkOp& op, const CommGroup& comm, int self) {
  const int n = static_cast<int>(comm.members.size());
  if (self < 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "rank {} issues {} (seq {}, {}) on communicator {}, which it is not a "
                    "member of",
                    g, opKindName(op.kind), op.seq, op.source, commName(comm));
  }
  const bool p2p = describe(op.kind).pointToPoint;
  const bool rooted = describe(op.kind).rooted;
  const int arg = p2p ? op.peer : op.root;
  if ((p2p || rooted) && (arg < 0 || arg >= n)) {
    return NS_ERROR(Code::kInvalidArgument, "rank {} on communicator {} at seq {}: {} {} is outside 0..{} ({})", g,
                    commName(comm), op.seq, opKindName(op.kind), p2p ? "peer" : "root", arg, n - 1, op.source);
  }
  if (op.bytes > kMaxOpBytes) {
    return NS_ERROR(Code::kInvalidArgument,
                    "rank {} on communicator {} at seq {}: {} moves {} bytes, more than "
                    "the {} bytes (1 PiB) phynet replays in one operation ({}); shrink it with --scale",
                    g, commName(comm), op.seq, opKindName(op.kind), op.bytes, kMaxOpBytes, op.source);
  }
  if (op.bytes != opBytes(op.kind, op.count, op.type, n)) {
    return NS_ERROR(Code::kInvalidArgument,
                    "rank {} on communicator {} at seq {}: {} does not follow the bytes "
                    "rule ({} bytes expected; {})",
                    g, commName(comm), op.seq, describeOp(op), opBytes(op.kind, op.count, op.type, n), op.source);
  }
  return Status::Ok();
}

Status checkStructure(const Workload& w, std::vector<CommLists>* lists) {
  if (w.worldSize <= 0 || static_cast<int>(w.ranks.size()) != w.worldSize) {
    return NS_ERROR(Code::kInvalidArgument, "the workload has {} rank entries for a world of {}", w.ranks.size(),
                    w.worldSize);
  }
  std::unordered_map<uint64_t, size_t> index;
  for (const CommGroup& comm : w.comms) {
    CommLists l;
    l.comm = &comm;
    if (comm.members.empty()) return NS_ERROR(Code::kInvalidArgument, "communicator {} has no members", commName(comm));
    for (size_t r = 0; r < comm.members.size(); ++r) {
      int g = comm.members[r];
      if (g < 0 || g >= w.worldSize || !l.rankOf.emplace(g, static_cast<int>(r)).second) {
        return NS_ERROR(Code::kInvalidArgument,
                        "communicator {}: member {} is global rank {} (world of {}, "
                        "each rank once)",
                        commName(comm), r, g, w.worldSize);
      }
    }
    l.collectives.resize(comm.members.size());
    if (!index.emplace(comm.id, lists->size()).second) {
      return NS_ERROR(Code::kInvalidArgument, "communicator {} is listed twice", commName(comm));
    }
    lists->push_back(std::move(l));
  }
  for (int g = 0; g < w.worldSize; ++g) {
    if (w.ranks[g].globalRank != g) {
      return NS_ERROR(Code::kInvalidArgument, "rank entry {} holds global rank {}", g, w.ranks[g].globalRank);
    }
    for (const WorkOp& op : w.ranks[g].ops) {
      auto it = index.find(op.commId);
      if (it == index.end()) {
        return NS_ERROR(Code::kInvalidArgument, "rank {} at {}: {} on unknown communicator {:#018x}", g, op.source,
                        opKindName(op.kind), op.commId);
      }
      CommLists& l = (*lists)[it->second];
      auto member = l.rankOf.find(g);
      NS_RETURN_IF_ERROR(checkOpShape(g, op, *l.comm, member == l.rankOf.end() ? -1 : member->second));
      const int self = member->second;
      if (op.kind == OpKind::kSend) l.sends[{self, op.peer}].push_back(&op);
      else if (op.kind == OpKind::kRecv) l.recvs[{op.peer, self}].push_back(&op);
      else l.collectives[self].push_back(&op);
    }
  }
  return Status::Ok();
}

// The first disagreement of one communicator's collective sequences.
Finding checkCollectives(const CommLists& l) {
  const CommGroup& c = *l.comm;
  const auto& ref = l.collectives[0];
  Finding best;
  for (size_t r = 1; r < c.members.size(); ++r) {
    const auto& mine = l.collectives[r];
    const int g = c.members[r], g0 = c.members[0];
    size_t common = std::min(ref.size(), mine.size());
    for (size_t k = 0; k < common && k < best.position; ++k) {
      if (sameCollective(*ref[k], *mine[k])) continue;
      best = {k, fmt::format("rank {} (rank {} of communicator {}) disagrees at seq {}: it issues {} ({}), while "
                             "rank {} (rank 0) issues {} at seq {} ({})",
                             g, r, commName(c), mine[k]->seq, describeOp(*mine[k]), mine[k]->source, g0,
                             describeOp(*ref[k]), ref[k]->seq, ref[k]->source)};
      break;
    }
    if (common < best.position && mine.size() != ref.size()) {
      if (mine.size() < ref.size()) {
        best = {common, fmt::format("rank {} (rank {} of communicator {}) issues only {} collectives on it, rank {} "
                                    "(rank 0) issues {}: rank {}'s {} at seq {} ({}) has no partner on rank {}",
                                    g, r, commName(c), mine.size(), g0, ref.size(), g0, describeOp(*ref[common]),
                                    ref[common]->seq, ref[common]->source, g)};
      } else {
        best = {common, fmt::format("rank {} (rank {} of communicator {}) issues {} at seq {} ({}), which rank {} "
                                    "(rank 0) never issues: it issues only {} collectives on it",
                                    g, r, commName(c), describeOp(*mine[common]), mine[common]->seq,
                                    mine[common]->source, g0, ref.size())};
      }
    }
  }
  return best;
}

// The first unmatched send or receive of one communicator.
Finding checkPointToPoint(const CommLists& l) {
  const CommGroup& c = *l.comm;
  static const std::vector<const WorkOp*> kNone;
  Finding best;
  std::map<std::pair<int, int>, bool> pairs;
  for (const auto& [key, list] : l.sends) pairs[key] = true;
  for (const auto& [key, list] : l.recvs) pairs[key] = true;
  for (const auto& [key, unused] : pairs) {
    auto s = l.sends.find(key);
    auto r = l.recvs.find(key);
    const auto& sends = s == l.sends.end() ? kNone : s->second;
    const auto& recvs = r == l.recvs.end() ? kNone : r->second;
    const int from = c.members[key.first], to = c.members[key.second];
    size_t common = std::min(sends.size(), recvs.size());
    for (size_t k = 0; k < common && k < best.position; ++k) {
      if (sends[k]->bytes == recvs[k]->bytes) continue;
      best = {k, fmt::format("rank {} on communicator {}: its send #{} to rank {} at seq {} is {} ({}), but the "
                             "matching receive of rank {} at seq {} is {} ({})",
                             from, commName(c), k + 1, to, sends[k]->seq, describeOp(*sends[k]), sends[k]->source, to,
                             recvs[k]->seq, describeOp(*recvs[k]), recvs[k]->source)};
      break;
    }
    if (common < best.position && sends.size() != recvs.size()) {
      if (sends.size() > recvs.size()) {
        best = {common, fmt::format("rank {} on communicator {} sends {} messages to rank {}, which receives only {} "
                                    "from it: send at seq {} ({}) is unmatched",
                                    from, commName(c), sends.size(), to, recvs.size(), sends[common]->seq,
                                    sends[common]->source)};
      } else {
        best = {common, fmt::format("rank {} on communicator {} posts {} receives from rank {}, which sends only {} to "
                                    "it: receive at seq {} ({}) is unmatched",
                                    to, commName(c), recvs.size(), from, sends.size(), recvs[common]->seq,
                                    recvs[common]->source)};
      }
    }
  }
  return best;
}

// Every communicator with sends or receives, in the order the replay runs its operations: the
// first that would deadlock.
Status checkOrder(const Workload& w, const std::vector<CommLists>& lists) {
  std::unordered_map<uint64_t, size_t> withP2p;  // comm id -> index into lists / ordered
  for (size_t i = 0; i < lists.size(); ++i) {
    if (!lists[i].sends.empty() || !lists[i].recvs.empty()) withP2p.emplace(lists[i].comm->id, i);
  }
  if (withP2p.empty()) return Status::Ok();
  std::vector<std::vector<std::vector<const WorkOp*>>> ordered(lists.size());
  for (const auto& [id, i] : withP2p) ordered[i].resize(lists[i].comm->members.size());
  for (const RankWork& rank : w.ranks) {
    for (const WorkOp& op : rank.ops) {
      auto it = withP2p.find(op.commId);
      if (it == withP2p.end()) continue;
      ordered[it->second][lists[it->second].rankOf.at(rank.globalRank)].push_back(&op);
    }
  }
  for (size_t i = 0; i < lists.size(); ++i) {
    if (ordered[i].empty()) continue;
    std::string deadlock = findDeadlock(*lists[i].comm, ordered[i]);
    if (!deadlock.empty()) return Status(Code::kInvalidArgument, deadlock);
  }
  return Status::Ok();
}

}  // namespace

Status checkRankStructure(const Workload& w, int globalRank) {
  for (const WorkOp& op : w.ranks.at(globalRank).ops) {
    const CommGroup* comm = w.findComm(op.commId);
    if (!comm) {
      return NS_ERROR(Code::kInvalidArgument, "rank {} at {}: {} on unknown communicator {:#018x}", globalRank,
                      op.source, opKindName(op.kind), op.commId);
    }
    NS_RETURN_IF_ERROR(checkOpShape(globalRank, op, *comm, commRankOf(*comm, globalRank)));
  }
  return Status::Ok();
}

Status checkWorkload(const Workload& workload) {
  std::vector<CommLists> lists;
  lists.reserve(workload.comms.size());
  NS_RETURN_IF_ERROR(checkStructure(workload, &lists));
  Finding first;
  for (const CommLists& l : lists) {
    Finding f = checkCollectives(l);
    if (f.position < first.position) first = std::move(f);
  }
  if (first.position == SIZE_MAX) {
    for (const CommLists& l : lists) {
      Finding f = checkPointToPoint(l);
      if (f.position < first.position) first = std::move(f);
    }
  }
  if (first.position != SIZE_MAX) return Status(Code::kInvalidArgument, first.message);
  return checkOrder(workload, lists);
}

}  // namespace nshim::workload
