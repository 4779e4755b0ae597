// Ranks that disagree on a collective of equal byte counts, one rank per process, with
// NCCLSHIM_CHECK_CALLS=1 (set by the launcher for this scenario): a float and an int32 allreduce,
// sum and max, broadcasts from different roots. Without the check the first two give wrong data
// silently; with it every rank fails the call quickly with ncclInvalidUsage and a message naming the
// ranks and their calls, and the communicator keeps the error (ncclCommGetAsyncError).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "shim_checks.h"

namespace shimtest {
namespace {

// Runs `call` on a new communicator of every rank; "" when it fails with ncclInvalidUsage on this
// rank within a few seconds, ncclGetLastError mentions every needle, and the communicator reports
// the error as its asynchronous error.
template <typename Call>
std::string expectDisagreement(const Context& ctx, const std::string& idName, Call&& call,
                               std::initializer_list<const char*> needles) {
  ncclComm_t comm = nullptr;
  std::string error = initComm(ctx, idName, &comm);
  if (!error.empty()) return error;
  const double start = secondsNow();
  const ncclResult_t result = call(comm);
  const double elapsed = secondsNow() - start;
  FirstError first;
  first.keep(expectError(result, ncclInvalidUsage, "the disagreeing call", needles));
  if (elapsed > 3) first.keep("the disagreeing call took " + std::to_string(elapsed) + " s");
  ncclResult_t async = ncclSuccess;
  NT_TRY(ncclCommGetAsyncError(comm, &async));
  if (async != ncclInvalidUsage) first.keep("ncclCommGetAsyncError gives " + std::to_string(async));
  NT_TRY(ncclCommDestroy(comm));
  return first.message;
}

}  // namespace

void scenarioCallCheck(const Context& ctx) {
  runCheck(ctx, "setting-on", []() -> std::string {
    const char* value = std::getenv("NCCLSHIM_CHECK_CALLS");
    return value != nullptr && std::string(value) == "1" ? "" : "NCCLSHIM_CHECK_CALLS is not 1 in this rank";
  });
  const size_t count = 64;  // float and int32: the same 256 bytes
  runCheck(ctx, "allreduce-float-vs-int32", [&]() -> std::string {
    return expectDisagreement(
        ctx, "types",
        [&](ncclComm_t comm) {
          std::vector<int32_t> send(count, 1), recv(count);
          return ncclAllReduce(send.data(), recv.data(), count, ctx.rank == 1 ? ncclFloat32 : ncclInt32, ncclSum, comm,
                               nullptr);
        },
        {"ncclAllReduce", "rank 1 called allreduce with float/sum, count 64", "rank 0 allreduce with int32/sum"});
  });
  runCheck(ctx, "allreduce-sum-vs-max", [&]() -> std::string {
    return expectDisagreement(ctx, "ops",
                              [&](ncclComm_t comm) {
                                std::vector<float> send(count, 1.0f), recv(count);
                                return ncclAllReduce(send.data(), recv.data(), count, ncclFloat32,
                                                     ctx.rank == 1 ? ncclMax : ncclSum, comm, nullptr);
                              },
                              {"rank 1 called allreduce with float/max", "rank 0 allreduce with float/sum"});
  });
  runCheck(ctx, "broadcast-different-roots", [&]() -> std::string {
    return expectDisagreement(
        ctx, "roots",
        [&](ncclComm_t comm) {
          std::vector<float> buffer(count, static_cast<float>(ctx.rank));
          return ncclBroadcast(buffer.data(), buffer.data(), count, ncclFloat32, ctx.rank == 1 ? 1 : 0, comm, nullptr);
        },
        {"ncclBroadcast", "rank 1 called broadcast with float, root 1", "rank 0 broadcast with float, root 0"});
  });
  // Agreeing calls go through the check unchanged (every other scenario runs with it on, too).
  runCheck(ctx, "agreeing-calls-pass", [&]() -> std::string {
    ncclComm_t comm = nullptr;
    std::string error = initComm(ctx, "agree", &comm);
    if (!error.empty()) return error;
    int32_t mine = ctx.rank + 1, sum = 0;
    NT_TRY(ncclAllReduce(&mine, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
    NT_TRY(ncclCommDestroy(comm));
    const int32_t want = ctx.nranks * (ctx.nranks + 1) / 2;
    return sum == want ? "" : "allreduce gave " + std::to_string(sum) + ", not " + std::to_string(want);
  });
}

}  // namespace shimtest
