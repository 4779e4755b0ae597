// Uneven all-to-all groups in a trace's operations (uneven_alltoall.h).
#include "workload/uneven_alltoall.h"

#include <map>

#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

// Whether ops[begin, end) of one communicator are one send to and one receive from every other rank
// (a piece to or from itself allowed), with sizes that are not all equal.
bool isUnevenExchange(const std::vector<WorkOp>& ops, const std::vector<size_t>& members, int nranks, int self) {
  std::vector<int> sends(static_cast<size_t>(nranks), 0), recvs(static_cast<size_t>(nranks), 0);
  std::map<uint64_t, int> sizes;
  for (size_t i : members) {
    const WorkOp& op = ops[i];
    if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) return false;
    if (op.peer < 0 || op.peer >= nranks) return false;
    std::vector<int>& seen = op.kind == OpKind::kSend ? sends : recvs;
    if (++seen[static_cast<size_t>(op.peer)] > 1) return false;
    if (op.peer != self) ++sizes[op.bytes];
  }
  for (int r = 0; r < nranks; ++r) {
    if (r != self && (sends[static_cast<size_t>(r)] != 1 || recvs[static_cast<size_t>(r)] != 1)) return false;
  }
  return sizes.size() > 1;
}

}  // namespace

size_t markUnevenAllToAll(std::vector<WorkOp>& ops, const Workload& workload, int globalRank) {
  size_t marked = 0;
  size_t i = 0;
  while (i < ops.size()) {
    size_t end = i + 1;
    if (ops[i].group == 0) {
      i = end;
      continue;
    }
    while (end < ops.size() && ops[end].group == ops[i].group) ++end;
    std::map<uint64_t, std::vector<size_t>> byComm;  // the group's ops per communicator
    for (size_t k = i; k < end; ++k) byComm[ops[k].commId].push_back(k);
    for (const auto& [commId, members] : byComm) {
      const CommGroup* comm = workload.findComm(commId);
      if (!comm || comm->members.size() < 3) continue;
      const int nranks = static_cast<int>(comm->members.size());
      if (!isUnevenExchange(ops, members, nranks, commRankOf(*comm, globalRank))) continue;
      for (size_t k : members) ops[k].origin = OpOrigin::kAllToAllV;
      ++marked;
    }
    i = end;
  }
  return marked;
}

}  // namespace nshim::workload
