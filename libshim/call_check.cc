// The call-signature exchange of NCCLSHIM_CHECK_CALLS (call_check.h).
#include "libshim/call_check.h"

#include <cstring>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "common/settings.h"

namespace nshim {
namespace {

constexpr int kRanksNamed = 3;  // disagreeing ranks named in one message; the rest are counted

bool sameCall(const CallSignature& a, const CallSignature& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

// "allreduce with float/sum, count 4", "broadcast with int32, root 1, count 8".
std::string describeCall(const CallSignature& call) {
  std::string text = call.kind < kNumCollectiveKinds ? describe(static_cast<CollectiveKind>(call.kind)).name : "?";
  text += " with ";
  text += call.type < kNumDataTypes ? dataTypeName(static_cast<DataType>(call.type)) : "?";
  if (call.op >= 0) {
    text += "/";
    text += call.op < kNumReduceKinds ? reduceKindName(static_cast<ReduceKind>(call.op)) : "?";
  }
  if (call.root >= 0) text += fmt::format(", root {}", call.root);
  return text + fmt::format(", count {}", call.count);
}

}  // namespace

CallSignature signatureOf(CollectiveKind kind, DataType type, size_t count, int op, int root) {
  CallSignature call;
  call.kind = static_cast<uint8_t>(kind);
  call.type = static_cast<uint8_t>(type);
  call.op = static_cast<int8_t>(op);
  call.root = root;
  call.count = count;
  return call;
}

bool callChecksOn() {
  static const bool on = settingBool(Setting::NCCLSHIM_CHECK_CALLS);
  return on;
}

Status checkSameCall(ShimComm& comm, const CallSignature& mine) {
  const int nranks = comm.nranks();
  if (nranks < 2) return Status::Ok();
  std::vector<CallSignature> all(static_cast<size_t>(nranks));
  NS_RETURN_IF_ERROR(allGather(comm.engine(), &mine, all.data(), sizeof(CallSignature), DataType::kUint8));
  // Every rank compares the same gathered signatures against rank 0's: all reach the same verdict.
  std::string differences;
  int differing = 0;
  for (int rank = 1; rank < nranks; ++rank) {
    if (sameCall(all[rank], all[0])) continue;
    if (++differing > kRanksNamed) continue;
    differences += fmt::format("{}rank {} called {} but rank 0 {}", differences.empty() ? "" : "; ", rank,
                               describeCall(all[rank]), describeCall(all[0]));
  }
  if (differing == 0) return Status::Ok();
  if (differing > kRanksNamed) {
    differences += fmt::format(" (and {} more ranks differ from rank 0)", differing - kRanksNamed);
  }
  Status mismatch =
      NS_ERROR(Code::kInvalidUsage, "the ranks called different collectives (NCCLSHIM_CHECK_CALLS=1): {}", differences);
  comm.recordCallMismatch(mismatch);
  return mismatch;
}

}  // namespace nshim
