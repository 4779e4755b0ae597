// Bus-bandwidth factors and the per-rank wire-byte model of the engine's algorithms.
#include "phynet/traffic_model.h"

namespace nshim::phynet {

double busBandwidthFactor(OpKind kind, int nranks) {
  if (nranks <= 1) return kind == OpKind::kAllReduce || kind == OpKind::kAllGather ||
                              kind == OpKind::kReduceScatter || kind == OpKind::kAllToAll ? 0.0 : 1.0;
  const double n = nranks;
  switch (kind) {
    case OpKind::kAllReduce: return 2.0 * (n - 1) / n;
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll: return (n - 1) / n;
    default: return 1.0;
  }
}

uint64_t modelSentBytes(const WorkOp& op, int commRank, int nranks, const CollectiveOptions& options) {
  const uint64_t n = static_cast<uint64_t>(nranks);
  const uint64_t unit = op.count * dataTypeSize(op.type);  // the count argument in bytes
  if (op.count == 0) return 0;
  switch (op.kind) {
    case OpKind::kAllReduce: {
      if (n == 1) return 0;
      bool powerOfTwo = (n & (n - 1)) == 0;
      if (powerOfTwo && unit <= options.smallAllReduceBytes) {
        uint64_t rounds = 0;
        for (uint64_t d = 1; d < n; d <<= 1) ++rounds;
        return rounds * unit;
      }
      return 2 * (n - 1) * unit / n;
    }
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll: return (n - 1) * unit;
    case OpKind::kBroadcast: {
      int position = ((commRank - op.root) % nranks + nranks) % nranks;
      return position < nranks - 1 ? unit : 0;
    }
    case OpKind::kReduce: return commRank == op.root ? 0 : unit;
    case OpKind::kGather: return commRank == op.root ? 0 : unit;
    case OpKind::kScatter: return commRank == op.root ? (n - 1) * unit : 0;
    case OpKind::kSend: return op.peer == commRank ? 0 : unit;
    case OpKind::kRecv: return 0;
  }
  return 0;
}

}  // namespace nshim::phynet
