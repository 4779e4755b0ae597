// Process checks of the API surface: library and communicator queries, memory and registration,
// invalid arguments (the right ncclResult_t and a readable ncclGetLastError naming the argument),
// groups containing a bad call, unsupported calls, and communicator configs (non-blocking, bad
// magic, ncclCommInitRankScalable).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "shim_checks.h"

namespace shimtest {

void runBasicChecks(const Context& ctx, ncclComm_t comm) {
  runCheck(ctx, "basics/version", []() -> std::string {
    int version = 0;
    NT_TRY(ncclGetVersion(&version));
    return version == NCCL_VERSION_CODE ? "" : "ncclGetVersion gave " + std::to_string(version);
  });
  runCheck(ctx, "basics/error-strings", []() -> std::string {
    for (int r = ncclSuccess; r < ncclNumResults; ++r) {
      const char* text = ncclGetErrorString(static_cast<ncclResult_t>(r));
      if (text == nullptr || text[0] == '\0') return "no text for result " + std::to_string(r);
    }
    return std::strcmp(ncclGetErrorString(ncclInvalidArgument), ncclGetErrorString(ncclRemoteError)) != 0
               ? ""
               : "different results share one string";
  });
  runCheck(ctx, "basics/queries", [&]() -> std::string {
    int count = -1, rank = -1, device = -1;
    ncclResult_t async = ncclInternalError;
    NT_TRY(ncclCommCount(comm, &count));
    NT_TRY(ncclCommUserRank(comm, &rank));
    NT_TRY(ncclCommCuDevice(comm, &device));
    NT_TRY(ncclCommGetAsyncError(comm, &async));
    if (count != ctx.nranks || rank != ctx.rank || device < 0 || async != ncclSuccess) {
      return "count " + std::to_string(count) + " rank " + std::to_string(rank) + " device " + std::to_string(device) +
             " async error " + std::to_string(async);
    }
    return "";
  });
  runCheck(ctx, "basics/mem-alloc-and-register", [&]() -> std::string {
    void* memory = nullptr;
    void* handle = nullptr;
    const size_t count = (1 << 20) / 4;
    NT_TRY(ncclMemAlloc(&memory, count * 4));
    auto* values = static_cast<int32_t*>(memory);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<int32_t>((i * 31 + ctx.rank * 7) % 1000);
    NT_TRY(ncclCommRegister(comm, memory, count * 4, &handle));
    // Registered host memory works as a collective buffer (zero copy over ibverbs): every element
    // is the maximum over the ranks.
    NT_TRY(ncclAllReduce(memory, memory, count, ncclInt32, ncclMax, comm, nullptr));
    NT_TRY(ncclCommDeregister(comm, handle));
    std::string bad;
    for (size_t i = 0; i < count && bad.empty(); ++i) {
      int32_t want = 0;
      for (int r = 0; r < ctx.nranks; ++r) want = std::max(want, static_cast<int32_t>((i * 31 + r * 7) % 1000));
      if (values[i] != want)
        bad = "element " + std::to_string(i) + " is " + std::to_string(values[i]) + ", not " + std::to_string(want);
    }
    NT_TRY(ncclMemFree(memory));
    if (!bad.empty()) return bad;
    return handle != nullptr ? "" : "ncclCommRegister gave a NULL handle";
  });
}

void runArgumentChecks(const Context& ctx, ncclComm_t comm) {
  const int n = ctx.nranks;
  float buf[16] = {0};
  float out[64] = {0};
  ncclUniqueId zeroId;
  std::memset(&zeroId, 0, sizeof(zeroId));
  ncclComm_t unused = nullptr;
  auto check = [&](const std::string& name, ncclResult_t result, ncclResult_t want,
                   std::initializer_list<const char*> needles) {
    runCheck(ctx, "errors/" + name, [&] { return expectError(result, want, name, needles); });
  };
  void* impossible = nullptr;
  check("mem-alloc-impossible-size", ncclMemAlloc(&impossible, size_t{1} << 62), ncclSystemError,
        {"ncclMemAlloc", "4611686018427387904 bytes"});
  runCheck(ctx, "errors/mem-alloc-impossible-size-leaves-pointer",
           [&]() -> std::string { return impossible == nullptr ? "" : "ncclMemAlloc failed but set the pointer"; });
  check("null-comm", ncclAllReduce(buf, out, 4, ncclFloat32, ncclSum, nullptr, nullptr), ncclInvalidArgument,
        {"ncclAllReduce", "comm"});
  check("bad-datatype", ncclAllReduce(buf, out, 4, static_cast<ncclDataType_t>(99), ncclSum, comm, nullptr),
        ncclInvalidArgument, {"ncclAllReduce", "datatype", "99"});
  check("bad-op", ncclAllReduce(buf, out, 4, ncclFloat32, static_cast<ncclRedOp_t>(77), comm, nullptr),
        ncclInvalidArgument, {"op", "77"});
  check("count-overflow", ncclAllGather(buf, out, SIZE_MAX / 2, ncclFloat32, comm, nullptr), ncclInvalidArgument,
        {"ncclAllGather", "count"});
  check("root-too-large", ncclBroadcast(buf, out, 4, ncclFloat32, n, comm, nullptr), ncclInvalidArgument,
        {"ncclBroadcast", "root"});
  check("root-negative", ncclReduce(buf, out, 4, ncclFloat32, ncclSum, -1, comm, nullptr), ncclInvalidArgument,
        {"ncclReduce", "root"});
  check("peer-out-of-range", ncclSend(buf, 4, ncclFloat32, n + 3, comm, nullptr), ncclInvalidArgument,
        {"ncclSend", "peer"});
  check("null-sendbuff", ncclAllReduce(nullptr, out, 4, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidArgument,
        {"sendbuff"});
  check("null-recvbuff", ncclRecv(nullptr, 4, ncclFloat32, 0, comm, nullptr), ncclInvalidArgument, {"recvbuff"});
  check("init-nranks", ncclCommInitRank(&unused, 0, zeroId, 0), ncclInvalidArgument, {"nranks"});
  check("init-rank", ncclCommInitRank(&unused, n, zeroId, n), ncclInvalidArgument, {"rank"});
  check("split-color", ncclCommSplit(comm, -5, 0, &unused, nullptr), ncclInvalidArgument, {"color"});
  int ignored = 0;
  check("query-null-comm", ncclCommCount(nullptr, &ignored), ncclInvalidArgument, {"ncclCommCount", "comm"});
  check("window-register-unsupported", ncclCommWindowRegister(comm, buf, sizeof(buf), nullptr, 0), ncclInvalidUsage,
        {"GPU"});
  check("group-end-without-start", ncclGroupEnd(), ncclInvalidUsage, {"ncclGroupStart"});

  runCheck(ctx, "errors/premulsum-handles", [&]() -> std::string {
    float two = 2;
    ncclRedOp_t op;
    NT_TRY(ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, comm));
    FirstError first;
    first.keep(expectError(ncclAllReduce(buf, out, 4, ncclInt32, op, comm, nullptr), ncclInvalidArgument,
                           "PreMulSum op of another datatype", {"datatype"}));
    NT_TRY(ncclRedOpDestroy(op, comm));
    first.keep(expectError(ncclAllReduce(buf, out, 4, ncclFloat32, op, comm, nullptr), ncclInvalidArgument,
                           "destroyed PreMulSum op", {"op"}));
    first.keep(expectError(ncclRedOpDestroy(op, comm), ncclInvalidArgument, "second ncclRedOpDestroy", {"op"}));
    first.keep(expectError(ncclRedOpDestroy(ncclSum, comm), ncclInvalidArgument, "destroying ncclSum", {"built-in"}));
    return first.message;
  });
  runCheck(ctx, "errors/bad-call-fails-its-group", [&]() -> std::string {
    float one[4] = {1, 1, 1, 1};
    NT_TRY(ncclGroupStart());
    NT_TRY(ncclAllReduce(one, out, 4, ncclFloat32, ncclSum, comm, nullptr));
    ncclResult_t bad = ncclAllReduce(one, out, 4, static_cast<ncclDataType_t>(42), ncclSum, comm, nullptr);
    ncclResult_t end = ncclGroupEnd();
    FirstError first;
    first.keep(expectError(bad, ncclInvalidArgument, "bad call in group", {"datatype"}));
    first.keep(expectError(end, ncclInvalidArgument, "ncclGroupEnd after a bad call", {"ncclGroupEnd"}));
    // The communicator is still usable: nothing of the failed group was sent.
    NT_TRY(ncclAllReduce(one, out, 4, ncclFloat32, ncclSum, comm, nullptr));
    if (first.message.empty() && out[0] != n)
      first.keep("allreduce after the failed group gave " + std::to_string(out[0]));
    return first.message;
  });
}

void runConfigChecks(const Context& ctx) {
  runCheck(ctx, "config/non-blocking", [&]() -> std::string {
    ncclUniqueId id;
    std::string error;
    if (!shareUniqueId(ctx, "nonblocking", &id, &error)) return error;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclCommInitRankConfig(&comm, ctx.nranks, id, ctx.rank, &config);
    if (result != ncclSuccess && result != ncclInProgress) return ncclFailure(result, "ncclCommInitRankConfig");
    ncclResult_t state = ncclInProgress;
    for (double end = secondsNow() + 20; state == ncclInProgress && secondsNow() < end;) {
      NT_TRY(ncclCommGetAsyncError(comm, &state));
    }
    if (state != ncclSuccess) return "non-blocking init ended with " + std::to_string(state);
    int32_t one = 1, sum = 0;
    NT_TRY(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
    NT_TRY(ncclCommFinalize(comm));
    NT_TRY(ncclCommDestroy(comm));
    return sum == ctx.nranks ? "" : "allreduce on the non-blocking communicator gave " + std::to_string(sum);
  });
  runCheck(ctx, "config/bad-magic", [&]() -> std::string {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.magic = 0;
    ncclUniqueId zeroId;
    std::memset(&zeroId, 0, sizeof(zeroId));
    ncclComm_t comm = nullptr;
    return expectError(ncclCommInitRankConfig(&comm, ctx.nranks, zeroId, ctx.rank, &config), ncclInvalidArgument,
                       "ncclCommInitRankConfig with a bad config", {"config"});
  });
  runCheck(ctx, "config/init-rank-scalable", [&]() -> std::string {
    ncclUniqueId id;
    std::string error;
    if (!shareUniqueId(ctx, "scalable", &id, &error)) return error;
    ncclComm_t comm = nullptr;
    NT_TRY(ncclCommInitRankScalable(&comm, ctx.nranks, ctx.rank, 1, &id, nullptr));
    int64_t mine = ctx.rank, total = 0;
    NT_TRY(ncclAllReduce(&mine, &total, 1, ncclInt64, ncclSum, comm, nullptr));
    NT_TRY(ncclCommDestroy(comm));
    int64_t want = static_cast<int64_t>(ctx.nranks) * (ctx.nranks - 1) / 2;
    return total == want ? "" : "allreduce on the scalable-init communicator gave " + std::to_string(total);
  });
}

}  // namespace shimtest
