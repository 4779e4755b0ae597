// The deadlock check: the members' batches are walked forward as the replay would complete them (a
// member moves to its next batch when every operation of its current one has its partner posted),
// until all are done or none can move.
#include "phynet/p2p_order_check.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "phynet/workload_transform.h"

namespace nshim::phynet {
namespace {

bool isP2p(const WorkOp& op) { return op.kind == OpKind::kSend || op.kind == OpKind::kRecv; }

// Where an operation sits: its member and batch.
struct Place {
  int member = -1;
  size_t batch = 0;
};

}  // namespace

std::string findDeadlock(const CommGroup& comm, const std::vector<std::vector<const WorkOp*>>& ops) {
  const int n = static_cast<int>(ops.size());
  // Batches: consecutive ops of one non-zero group.
  std::vector<std::vector<std::vector<const WorkOp*>>> batches(n);
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < ops[r].size(); ++i) {
      const bool joins = i > 0 && ops[r][i]->group != 0 && ops[r][i]->group == ops[r][i - 1]->group;
      if (!joins) batches[r].emplace_back();
      batches[r].back().push_back(ops[r][i]);
    }
  }
  // Where each send and receive sits, per (from, to) in order; collectives before each batch.
  std::map<std::pair<int, int>, std::vector<Place>> sends, recvs;
  std::vector<std::vector<size_t>> collectivesBefore(n);  // member -> collectives in batches < b
  std::map<const WorkOp*, size_t> collectiveIndex;        // the k-th collective of its member
  for (int r = 0; r < n; ++r) {
    size_t collectives = 0;
    for (size_t b = 0; b < batches[r].size(); ++b) {
      collectivesBefore[r].push_back(collectives);
      for (const WorkOp* op : batches[r][b]) {
        if (op->kind == OpKind::kSend) sends[{r, op->peer}].push_back({r, b});
        else if (op->kind == OpKind::kRecv) recvs[{op->peer, r}].push_back({r, b});
        else collectiveIndex[op] = collectives++;
      }
    }
    collectivesBefore[r].push_back(collectives);
  }
  // Member m has posted every batch up to at[m]. The partner of each send and receive (the k-th
  // send a->b and the k-th receive on b from a) is found by walking each member's batches in order.
  std::vector<size_t> at(n, 0);
  std::map<const WorkOp*, Place> waitsOn;
  for (int r = 0; r < n; ++r) {
    std::map<int, size_t> sentTo, receivedFrom;
    for (size_t b = 0; b < batches[r].size(); ++b) {
      for (const WorkOp* op : batches[r][b]) {
        if (op->kind == OpKind::kSend) {
          const auto& list = recvs[{r, op->peer}];
          const size_t k = sentTo[op->peer]++;
          if (k < list.size()) waitsOn[op] = list[k];
        } else if (op->kind == OpKind::kRecv) {
          const auto& list = sends[{op->peer, r}];
          const size_t k = receivedFrom[op->peer]++;
          if (k < list.size()) waitsOn[op] = list[k];
        }
      }
    }
  }
  // Collectives every member has posted (from the round's start: a round that moves nobody is a
  // fixed point all the same).
  size_t collectivesPosted = 0;
  auto ready = [&](const WorkOp* op) -> bool {
    if (isP2p(*op)) {
      auto it = waitsOn.find(op);
      return it != waitsOn.end() && at[it->second.member] >= it->second.batch;
    }
    return collectiveIndex.at(op) < collectivesPosted;
  };
  bool moved = true;
  while (moved) {
    moved = false;
    collectivesPosted = SIZE_MAX;
    for (int m = 0; m < n; ++m) {
      const size_t posted = collectivesBefore[m][std::min(at[m] + 1, batches[m].size())];
      collectivesPosted = std::min(collectivesPosted, posted);
    }
    for (int r = 0; r < n; ++r) {
      while (at[r] < batches[r].size()) {
        bool all = true;
        for (const WorkOp* op : batches[r][at[r]]) all = all && ready(op);
        if (!all) break;
        ++at[r];
        moved = true;
      }
    }
  }
  // Stuck members: the first op of each that cannot complete, and whom it waits for.
  std::string stuck;
  int shown = 0, count = 0;
  for (int r = 0; r < n; ++r) {
    if (at[r] >= batches[r].size()) continue;
    ++count;
    if (shown == 4) continue;
    for (const WorkOp* op : batches[r][at[r]]) {
      if (ready(op)) continue;
      const std::string who = comm.label == "pp" ? fmt::format("stage {}", r) : fmt::format("its rank {}", r);
      const std::string forWhom =
          isP2p(*op) ? fmt::format("rank {}", op->peer >= 0 && op->peer < n ? comm.members[op->peer] : -1)
                     : std::string("every member");
      stuck += fmt::format("{}rank {} ({}) waits in {} at seq {} ({}) for {}", shown ? "; " : "", comm.members[r],
                           who, describeOp(*op), op->seq, op->source, forWhom);
      ++shown;
      break;
    }
  }
  if (count == 0) return "";
  return fmt::format("communicator {} deadlocks: no member can go on ({} of {} ranks wait): {}{}; a send waits "
                     "for its receive, so sends and receives that wait on each other must be in one NCCL group "
                     "(ncclGroupStart/End, batch_isend_irecv) or in an order where each meets its partner",
                     commName(comm), count, n, stuck, count > shown ? fmt::format("; and {} more", count - shown) : "");
}

}  // namespace nshim::phynet
