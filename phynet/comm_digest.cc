// Per-communicator digests of a rank's operations and their comparison on rank 0.
#include "phynet/comm_digest.h"

#include "common/fnv1a.h"

#include <map>
#include <tuple>
#include <unordered_map>

#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

enum Side : int64_t { kCollectives = 0, kSendsTo = 1, kReceivesFrom = 2 };

struct Signature {
  uint64_t count = 0;
  uint64_t hash = kFnv1a64Basis;

  template <typename T>
  void add(const T& value) {
    hash = fnv1a64(&value, sizeof(value), hash);
  }
  bool operator==(const Signature&) const = default;
};

// Entry key: (communicator index, side, peer comm rank or -1).
using Key = std::tuple<uint32_t, int64_t, int64_t>;

}  // namespace

std::vector<int64_t> digestRankOps(const Workload& workload, int globalRank) {
  std::unordered_map<uint64_t, uint32_t> indexOf;
  for (size_t i = 0; i < workload.comms.size(); ++i) indexOf.emplace(workload.comms[i].id, static_cast<uint32_t>(i));
  std::map<Key, Signature> entries;
  for (const WorkOp& op : workload.ranks.at(globalRank).ops) {
    auto it = indexOf.find(op.commId);
    if (it == indexOf.end()) continue;  // checkRankStructure refuses it
    const bool send = op.kind == OpKind::kSend, recv = op.kind == OpKind::kRecv;
    Signature& s = entries[{it->second,
                            send   ? kSendsTo
                            : recv ? kReceivesFrom
                                   : kCollectives,
                            send || recv ? op.peer : -1}];
    ++s.count;
    s.add(op.bytes);
    if (send || recv) continue;
    s.add(static_cast<int>(op.kind));
    s.add(op.count);
    s.add(static_cast<int>(op.type));
    s.add(op.root);
    if (describe(op.kind).reduces) s.add(static_cast<int>(op.reduce));
  }
  std::vector<int64_t> words;
  words.reserve(entries.size() * 4);
  for (const auto& [key, s] : entries) {
    const auto& [comm, side, peer] = key;
    words.insert(words.end(), {static_cast<int64_t>(comm), side << 32 | (peer + 1), static_cast<int64_t>(s.count),
                               static_cast<int64_t>(s.hash)});
  }
  return words;
}

CommsToExamine commsToExamine(const Workload& workload, const std::vector<std::vector<int64_t>>& digests,
                              size_t maxDisagreeing) {
  const size_t nComms = workload.comms.size();
  // Per communicator: each member's collectives; per (from, to) comm-rank pair the sender's and the
  // receiver's view.
  std::vector<std::map<int, Signature>> collectives(nComms);
  std::vector<std::map<std::pair<int, int>, std::pair<Signature, Signature>>> pairs(nComms);
  std::vector<bool> disagree(nComms, false);
  for (size_t g = 0; g < digests.size(); ++g) {
    const std::vector<int64_t>& w = digests[g];
    for (size_t i = 0; i + 3 < w.size(); i += 4) {
      const uint64_t comm = static_cast<uint64_t>(w[i]);
      if (comm >= nComms) continue;  // cannot come from digestRankOps
      const int self = commRankOf(workload.comms[comm], static_cast<int>(g));
      const int64_t side = w[i + 1] >> 32;
      const int peer = static_cast<int>((w[i + 1] & 0xffffffff) - 1);
      const Signature s{static_cast<uint64_t>(w[i + 2]), static_cast<uint64_t>(w[i + 3])};
      if (self < 0) {
        disagree[comm] = true;  // an op on a communicator it is not in: checkWorkload names it
      } else if (side == kCollectives) {
        collectives[comm][self] = s;
      } else if (side == kSendsTo) {
        pairs[comm][{self, peer}].first = s;
      } else {
        pairs[comm][{peer, self}].second = s;
      }
    }
  }
  CommsToExamine out;
  for (size_t c = 0; c < nComms; ++c) {
    const int n = static_cast<int>(workload.comms[c].members.size());
    const Signature reference = collectives[c].count(0) ? collectives[c][0] : Signature{};
    for (int r = 1; r < n && !disagree[c]; ++r) {
      auto it = collectives[c].find(r);
      disagree[c] = (it == collectives[c].end() ? Signature{} : it->second) != reference;
    }
    for (const auto& [pair, sides] : pairs[c]) disagree[c] = disagree[c] || !(sides.first == sides.second);
    if (disagree[c]) {
      ++out.disagreeingTotal;
      if (out.disagreeing.size() < maxDisagreeing) out.disagreeing.push_back(workload.comms[c].id);
    }
    if (!pairs[c].empty()) out.pointToPoint.push_back(workload.comms[c].id);
  }
  return out;
}

}  // namespace nshim::phynet
