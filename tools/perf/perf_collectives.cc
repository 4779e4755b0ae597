// The table of measured collectives, each its descriptor (nccl-tests' size and bus-bandwidth
// conventions) with its NCCL call, and the pattern/expectation used to check every element.
#include "tools/perf/perf_collectives.h"

#include <cstring>

namespace nshim::perf {
namespace {

ncclResult_t runAllReduce(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, int, ncclComm_t comm) {
  return ncclAllReduce(s, r, c, t, o, comm, nullptr);
}
ncclResult_t runAllGather(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int, ncclComm_t comm) {
  return ncclAllGather(s, r, c, t, comm, nullptr);
}
ncclResult_t runReduceScatter(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, int, ncclComm_t comm) {
  return ncclReduceScatter(s, r, c, t, o, comm, nullptr);
}
ncclResult_t runBroadcast(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int root, ncclComm_t comm) {
  return ncclBroadcast(s, r, c, t, root, comm, nullptr);
}
ncclResult_t runReduce(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, int root, ncclComm_t comm) {
  return ncclReduce(s, r, c, t, o, root, comm, nullptr);
}
ncclResult_t runAllToAll(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int, ncclComm_t comm) {
  return ncclAlltoAll(s, r, c, t, comm, nullptr);
}
ncclResult_t runGather(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int root, ncclComm_t comm) {
  return ncclGather(s, r, c, t, root, comm, nullptr);
}
ncclResult_t runScatter(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int root, ncclComm_t comm) {
  return ncclScatter(s, r, c, t, root, comm, nullptr);
}
// Ring exchange: send to rank+1, receive from rank-1, grouped.
ncclResult_t runSendRecv(const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t, int, ncclComm_t comm) {
  int n = 0, rank = 0;
  ncclCommCount(comm, &n);
  ncclCommUserRank(comm, &rank);
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) return result;
  ncclResult_t sendResult = ncclSend(s, c, t, (rank + 1) % n, comm, nullptr);
  ncclResult_t recvResult = ncclRecv(r, c, t, (rank - 1 + n) % n, comm, nullptr);
  result = ncclGroupEnd();
  if (sendResult != ncclSuccess) return sendResult;
  if (recvResult != ncclSuccess) return recvResult;
  return result;
}

const PerfCollective kCollectives[] = {
    {describe(CollectiveKind::kAllReduce), runAllReduce},
    {describe(CollectiveKind::kAllGather), runAllGather},
    {describe(CollectiveKind::kReduceScatter), runReduceScatter},
    {describe(CollectiveKind::kBroadcast), runBroadcast},
    {describe(CollectiveKind::kReduce), runReduce},
    {describe(CollectiveKind::kAllToAll), runAllToAll},
    {describe(CollectiveKind::kGather), runGather},
    {describe(CollectiveKind::kScatter), runScatter},
    {describe(CollectiveKind::kSend), runSendRecv},
};

double combine(const std::string& op, double a, double b) {
  if (op == "prod") return a * b;
  if (op == "max") return a > b ? a : b;
  if (op == "min") return a < b ? a : b;
  return a + b;
}

bool isFloat(ncclDataType_t t) { return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16; }

}  // namespace

const PerfCollective* findPerfCollective(const std::string& name) {
  for (const PerfCollective& c : kCollectives) {
    if (name == c.name()) return &c;
  }
  return nullptr;
}

double perfInputValue(int rank, size_t index, bool forProduct) {
  size_t mix = static_cast<size_t>(rank) * 5 + index * 3;
  if (forProduct) return static_cast<double>(1 + (mix % 7 == 0 ? 1 : 0));  // mostly 1, some 2
  return static_cast<double>(mix % 9);  // 0..8: sums over 256 ranks stay exact in every type
}

double perfExpectedValue(const PerfCollective& c, const std::string& redOp, ncclDataType_t type, int n, int rank,
                         int root, size_t total, size_t index, bool* defined) {
  *defined = true;
  const std::string name = c.name();
  const bool product = redOp == "prod";
  if (name == "all_reduce" || name == "reduce" || name == "reduce_scatter") {
    if (name == "reduce" && rank != root) {
      *defined = false;
      return 0;
    }
    size_t at = name == "reduce_scatter" ? rank * (total / n) + index : index;
    double acc = perfInputValue(0, at, product);
    for (int p = 1; p < n; ++p) acc = combine(redOp, acc, perfInputValue(p, at, product));
    if (redOp == "avg") acc = isFloat(type) ? acc / n : static_cast<double>(static_cast<int64_t>(acc) / n);
    return acc;
  }
  size_t per = total / n;
  if (name == "all_gather" || name == "gather") {
    if (name == "gather" && rank != root) {
      *defined = false;
      return 0;
    }
    return perfInputValue(static_cast<int>(index / per), index % per, false);
  }
  if (name == "broadcast") return perfInputValue(root, index, false);
  if (name == "scatter") return perfInputValue(root, rank * per + index, false);
  if (name == "alltoall") return perfInputValue(static_cast<int>(index / per), rank * per + index % per, false);
  if (name == "sendrecv") return perfInputValue((rank - 1 + n) % n, index, false);
  *defined = false;
  return 0;
}

}  // namespace nshim::perf
