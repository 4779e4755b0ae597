// The token all-to-all at another expert-parallel size (expert_exchange.h).
#include "workload/expert_exchange.h"

#include <fmt/format.h>

#include "trace/trace_format.h"

namespace nshim::workload {

uint64_t spreadPart(uint64_t count, int parts, int part) {
  const uint64_t k = static_cast<uint64_t>(parts);
  return count / k + (static_cast<uint64_t>(part) < count % k ? 1 : 0);
}

Result<ExpertExchange> ExpertExchange::create(const trace::TraceSet& traces,
                                              const std::vector<std::map<uint64_t, int>>& expertComms, int oldEp,
                                              int newEp) {
  if (oldEp < 1 || newEp < 1 || (newEp % oldEp != 0 && oldEp % newEp != 0)) {
    return NS_ERROR(Code::kInvalidArgument,
                    "EP={} to EP={}: the sizes do not divide one another, so one rank's "
                    "experts would be split unevenly over the new ranks (no rule)",
                    oldEp, newEp);
  }
  ExpertExchange out(oldEp, newEp);
  out.sends_.resize(traces.files.size());
  for (size_t rank = 0; rank < traces.files.size(); ++rank) {
    const trace::TraceFile& file = traces.files[rank];
    std::map<int, std::vector<uint64_t>> received;  // per instance: receives per old peer
    for (const trace::OpEntry& entry : file.ops) {
      const trace::OpRecord& op = entry.record;
      auto instance = expertComms[rank].find(op.commId);
      if (instance == expertComms[rank].end()) continue;
      if (op.op != trace::OpCode::kSend && op.op != trace::OpCode::kRecv) continue;
      if (op.peer < 0 || op.peer >= oldEp) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: {} to peer {} of an expert group of {} ranks", file.path,
                        entry.line, trace::opName(op.op), op.peer, oldEp);
      }
      if (op.op == trace::OpCode::kSend) {
        auto& perPeer = out.sends_[rank][instance->second];
        perPeer.resize(oldEp);
        perPeer[op.peer].push_back(op.count);
        if (newEp > oldEp && op.count % (newEp / oldEp) != 0) ++out.uneven_;
      } else {
        auto& perPeer = received[instance->second];
        perPeer.resize(oldEp);
        ++perPeer[op.peer];
      }
    }
    // An all-to-all is one send to and one receive from every peer: the same number for each.
    for (auto& [instance, perPeer] : out.sends_[rank]) {
      std::vector<uint64_t>& recvs = received[instance];
      recvs.resize(oldEp);
      const uint64_t n = perPeer[0].size();
      for (int peer = 0; peer < oldEp; ++peer) {
        if (perPeer[peer].size() != n || recvs[peer] != n) {
          return NS_ERROR(Code::kInvalidArgument,
                          "{}: expert group {}: {} sends to peer 0 but {} sends to and {} "
                          "receives from peer {}: not an all-to-all, which the expert-parallel rule needs",
                          file.path, instance, n, perPeer[peer].size(), recvs[peer], peer);
        }
      }
      const uint64_t first = out.sends_[0].count(instance) ? out.sends_[0].at(instance)[0].size() : 0;
      if (n != first) {
        return NS_ERROR(Code::kInvalidArgument, "{}: expert group {}: {} all-to-alls where rank 0 has {}", file.path,
                        instance, n, first);
      }
    }
  }
  return out;
}

uint64_t ExpertExchange::sent(int rank, int instance, int peer, uint64_t ordinal) const {
  auto it = sends_[rank].find(instance);
  if (it == sends_[rank].end() || ordinal >= it->second[peer].size()) return 0;  // checked in create
  return it->second[peer][ordinal];
}

std::vector<ExpertExchange::NewOp> ExpertExchange::expand(bool send, int instance, int peer, uint64_t ordinal,
                                                          int position, const std::vector<int>& peerTemplates) const {
  std::vector<NewOp> out;
  if (newEp_ >= oldEp_) {
    const int k = newEp_ / oldEp_;
    for (int j = 0; j < k; ++j) {
      const int newPeer = peer * k + j;
      // Sending: part j of what went to old peer `peer`. Receiving: part position % k of what the
      // new peer's template sent to the experts this position now holds (old peer position / k).
      const uint64_t count =
          send ? spreadPart(sent(peerTemplates[position], instance, peer, ordinal), k, j)
               : spreadPart(sent(peerTemplates[newPeer], instance, position / k, ordinal), k, position % k);
      out.push_back({newPeer, count});
    }
    return out;
  }
  const int k = oldEp_ / newEp_;
  if (peer % k != 0) return out;  // merged into the op of peer - peer % k
  const int newPeer = peer / k;
  uint64_t count = 0;
  for (int j = 0; j < k; ++j) {
    count += send ? sent(peerTemplates[position], instance, newPeer * k + j, ordinal)
                  : sent(peerTemplates[newPeer], instance, position * k + j, ordinal);
  }
  out.push_back({newPeer, count});
  return out;
}

}  // namespace nshim::workload
