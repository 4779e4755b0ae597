// The deadlock check: the members' batches are walked forward as the replay would complete them (a
// member moves to its next batch when every operation of its current one has its partner posted),
// until all are done or none can move.
#include "workload/p2p_order_check.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

bool isP2p(const WorkOp& op) { return op.kind == OpKind::kSend || op.kind == OpKind::kRecv; }

constexpr size_t kNone = SIZE_MAX;

}  // namespace

std::string findDeadlock(const CommGroup& comm, const std::vector<std::vector<const WorkOp*>>& ops) {
  const int n = static_cast<int>(ops.size());
  // Per member, per op (indexed like ops[r]): its batch (consecutive ops of one non-zero group), and
  // what it waits for: the batch of its partner on the partner's member (the k-th send a->b with the
  // k-th receive on b from a), or its ordinal among the member's collectives.
  std::vector<std::vector<size_t>> batchStart(n);  // first op of each batch, then ops[r].size()
  std::vector<std::vector<size_t>> batchOf(n), partnerBatch(n), collectiveOrdinal(n);
  std::vector<std::vector<size_t>> collectivesBefore(n);  // per batch: collectives in earlier batches
  for (int r = 0; r < n; ++r) {
    const auto& mine = ops[r];
    batchOf[r].resize(mine.size());
    partnerBatch[r].assign(mine.size(), kNone);
    collectiveOrdinal[r].assign(mine.size(), kNone);
    size_t collectives = 0;
    for (size_t i = 0; i < mine.size(); ++i) {
      const bool joins = i > 0 && mine[i]->group != 0 && mine[i]->group == mine[i - 1]->group;
      if (!joins) {
        batchStart[r].push_back(i);
        collectivesBefore[r].push_back(collectives);
      }
      batchOf[r][i] = batchStart[r].size() - 1;
      if (!isP2p(*mine[i])) collectiveOrdinal[r][i] = collectives++;
    }
    batchStart[r].push_back(mine.size());
    collectivesBefore[r].push_back(collectives);
  }
  // Partners, pair by pair: the sends of a to b and the receives on b from a, each in issue order.
  std::map<std::pair<int, int>, std::vector<size_t>> sends, recvs;  // (from, to) -> op indices
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < ops[r].size(); ++i) {
      const WorkOp& op = *ops[r][i];
      if (op.peer < 0 || op.peer >= n) continue;
      if (op.kind == OpKind::kSend) sends[{r, op.peer}].push_back(i);
      else if (op.kind == OpKind::kRecv) recvs[{op.peer, r}].push_back(i);
    }
  }
  for (const auto& [pair, sent] : sends) {
    auto it = recvs.find(pair);
    if (it == recvs.end()) continue;
    const auto [from, to] = pair;
    for (size_t k = 0; k < std::min(sent.size(), it->second.size()); ++k) {
      partnerBatch[from][sent[k]] = batchOf[to][it->second[k]];
      partnerBatch[to][it->second[k]] = batchOf[from][sent[k]];
    }
  }
  std::vector<size_t> at(n, 0);  // member r has posted every batch up to at[r]
  auto peerOf = [&](int r, size_t i) { return ops[r][i]->peer; };
  // Collectives every member has posted (from the round's start: a round that moves nobody is a
  // fixed point all the same).
  size_t collectivesPosted = 0;
  auto ready = [&](int r, size_t i) -> bool {
    if (collectiveOrdinal[r][i] != kNone) return collectiveOrdinal[r][i] < collectivesPosted;
    return partnerBatch[r][i] != kNone && at[peerOf(r, i)] >= partnerBatch[r][i];
  };
  auto batchCount = [&](int r) { return batchStart[r].size() - 1; };
  bool moved = true;
  while (moved) {
    moved = false;
    collectivesPosted = SIZE_MAX;
    for (int m = 0; m < n; ++m) {
      collectivesPosted = std::min(collectivesPosted, collectivesBefore[m][std::min(at[m] + 1, batchCount(m))]);
    }
    for (int r = 0; r < n; ++r) {
      while (at[r] < batchCount(r)) {
        bool all = true;
        for (size_t i = batchStart[r][at[r]]; i < batchStart[r][at[r] + 1] && all; ++i) all = ready(r, i);
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
    if (at[r] >= batchCount(r)) continue;
    ++count;
    if (shown == 4) continue;
    for (size_t i = batchStart[r][at[r]]; i < batchStart[r][at[r] + 1]; ++i) {
      if (ready(r, i)) continue;
      const WorkOp* op = ops[r][i];
      const std::string who = comm.label == "pp" ? fmt::format("stage {}", r) : fmt::format("its rank {}", r);
      const std::string forWhom =
          isP2p(*op) ? fmt::format("rank {}", op->peer >= 0 && op->peer < n ? comm.members[op->peer] : -1)
                     : std::string("every member");
      stuck += fmt::format("{}rank {} ({}) waits in {} at seq {} ({}) for {}", shown ? "; " : "", comm.members[r], who,
                           describeOp(*op), op->seq, op->source, forWhom);
      ++shown;
      break;
    }
  }
  if (count == 0) return "";
  return fmt::format(
      "communicator {} deadlocks: no member can go on ({} of {} ranks wait): {}{}; a send waits "
      "for its receive, so sends and receives that wait on each other must be in one NCCL group "
      "(ncclGroupStart/End, batch_isend_irecv) or in an order where each meets its partner",
      commName(comm), count, n, stuck, count > shown ? fmt::format("; and {} more", count - shown) : "");
}

}  // namespace nshim::workload
