// Forward-mode process test, written only against nccl.h: run with LD_PRELOAD=libncclshim.so in
// front of the fake NCCL (fake_nccl.c), one process per rank:
//   forward_test_program <scenario> <rank> <nranks> <dir>
// Scenarios: forward (every API call reaches the fake with identical arguments, exactly once, and
// its results come back; with NCCLSHIM_HOOK_DEBUG also what the record hook saw), fail (errors of
// the real NCCL propagate unchanged), old (a function an older NCCL lacks), nonccl (no real NCCL
// at all), gpufree (auto mode without a GPU runs GPU-free: a real sum, nothing reaches the fake).
// Prints "CHECK PASS|FAIL <scenario>/<check>" lines and "COMMID <label> <id>" lines for the script
// (tests/suites/forward_tests.sh) to compare across ranks. Also built as a shared library
// (-DFORWARD_TEST_LIBRARY, entry forwardTestMain) that forward_loader dlopens RTLD_LOCAL, as
// Python loads PyTorch and with it NCCL.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../../common/main_fence.h"  // built without -I.
#include "fake_nccl_log.h"
#include "forward_test_util.h"

namespace fwdtest {
namespace {

#define VP(p) ((void*)(p))  // %p arguments

ncclUniqueId shareId(const Context& ctx, Expected& exp, const std::string& name) {
  ncclUniqueId id{};
  if (ctx.rank == 0) {
    exp.add(FAKE_FMT_GetUniqueId, VP(&id));
    ncclResult_t res = ncclGetUniqueId(&id);
    check(ctx, "unique-id-" + name, res == ncclSuccess && publish(ctx, name + ".id", &id, sizeof(id)),
          format("ncclGetUniqueId returned %d", res));
  } else {
    check(ctx, "unique-id-" + name, fetch(ctx, name + ".id", &id, sizeof(id)), "no unique id from rank 0");
  }
  return id;
}

bool isRamp(const unsigned char* data, size_t bytes, unsigned char start) {
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != static_cast<unsigned char>(start + i)) return false;
  }
  return true;
}

std::string envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

uint64_t hex(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 16); }

// ---- forward: every entry point, compared with the fake's log ----

struct ForwardRun {
  ncclComm_t comm = nullptr;
  ncclComm_t sub = nullptr;
  int color = 0;
};

void checkHookLog(const Context& ctx, const Expected& exp, const ForwardRun& run) {
  std::vector<HookLine> lines = readHookLog(hookLogPath());
  std::map<std::string, int> seen;
  for (const HookLine& line : lines) ++seen[line.get("fn")];
  check(ctx, "hook/every-call-reported-once", seen == exp.counts(),
        format("%zu hook lines for %zu calls", lines.size(), exp.lines().size()));

  const int r = ctx.rank;
  const int n = ctx.nranks;
  uint64_t mainId = 0;
  uint64_t expectSeq = 0;
  bool seqOk = true;
  bool firstAllReduce = true;
  for (const HookLine& line : lines) {
    const std::string fn = line.get("fn");
    if (fn == "ncclCommInitRank" && line.created.size() == 1 && hex(line.created[0][0]) == uint64_t(run.comm)) {
      const auto& made = line.created[0];
      mainId = hex(made[1]);
      check(ctx, "hook/init-describes-comm",
            made[2] == std::to_string(n) && made[3] == std::to_string(r) && made[4] == std::to_string(r) && mainId != 0,
            "new=" + made[1] + "," + made[2] + "," + made[3] + "," + made[4]);
      std::printf("COMMID main %s\n", made[1].c_str());
    }
    if (fn == "ncclCommSplit" && line.created.size() == 1) {
      const auto& made = line.created[0];
      if (made[7] == "-1") {
        check(ctx, "hook/split-nocolor", hex(made[0]) == 0 && made[6] == "1", "new=" + made[0] + " seq " + made[6]);
      } else {
        bool ok = hex(made[0]) == uint64_t(run.sub) && made[2] == std::to_string((n + 1) / 2) &&
                  made[3] == std::to_string(r / 2) && hex(made[5]) == mainId && made[6] == "0" &&
                  made[7] == std::to_string(run.color) && made[8] == std::to_string(n - r);
        check(ctx, "hook/split-describes-comm", ok, line.get("fn") + " new=" + made[0] + "," + made[2] + "," + made[3]);
        std::printf("COMMID split%d %s\n", run.color, made[1].c_str());
      }
    }
    if (fn == "ncclCommShrink" && line.created.size() == 1) {
      check(ctx, "hook/shrink-describes-comm", line.created[0][7] == "-2" && line.created[0][6] == "2");
      std::printf("COMMID shrink %s\n", line.created[0][1].c_str());
    }
    if (fn == "ncclCommInitRankConfig" && line.created.size() == 1)
      std::printf("COMMID config %s\n", line.created[0][1].c_str());
    if (fn == "ncclCommInitRankScalable" && line.created.size() == 1) {
      std::printf("COMMID scalable %s\n", line.created[0][1].c_str());
    }
    if (fn == "ncclCommInitAll") {
      bool ok = line.created.size() == 2 && line.created[0][1] == line.created[1][1] && line.created[0][4] == "3" &&
                line.created[1][4] == "5" && line.created[1][3] == "1";
      check(ctx, "hook/initall-describes-comms", ok);
    }
    bool isOp = fn == "ncclAllReduce" || fn == "ncclBroadcast" || fn == "ncclBcast" || fn == "ncclReduce" ||
                fn == "ncclAllGather" || fn == "ncclReduceScatter" || fn == "ncclAlltoAll" || fn == "ncclGather" ||
                fn == "ncclScatter" || fn == "ncclSend" || fn == "ncclRecv";
    if (isOp && hex(line.get("comm")) == uint64_t(run.comm)) {
      seqOk = seqOk && line.get("seq") == std::to_string(expectSeq++) && hex(line.get("commId")) == mainId;
    }
    if (fn == "ncclAllReduce" && firstAllReduce) {
      firstAllReduce = false;
      bool ok = line.get("count") == "16" && line.get("datatype") == std::to_string(ncclFloat) &&
                line.get("redop") == "0" && hex(line.get("stream")) == uint64_t(0x5000 + r) &&
                line.get("depth") == "0" && line.get("nranks") == std::to_string(n) &&
                line.get("rank") == std::to_string(r) && line.get("result") == "0";
      check(ctx, "hook/allreduce-arguments", ok, "count " + line.get("count") + " stream " + line.get("stream"));
    }
    if (fn == "ncclSend") {
      check(ctx, "hook/send-in-group", line.get("depth") == "1" && line.get("peer") == std::to_string((r + 1) % n),
            "depth " + line.get("depth") + " peer " + line.get("peer"));
    }
  }
  check(ctx, "hook/sequence-numbers", seqOk && expectSeq > 0, format("%llu operations", (unsigned long long)expectSeq));
}

void scenarioForward(const Context& ctx) {
  Expected exp;
  ForwardRun run;
  const int r = ctx.rank;
  const int n = ctx.nranks;
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x5000 + r));
  ncclResult_t res;

  int version = 0;
  exp.add(FAKE_FMT_GetVersion, VP(&version));
  res = ncclGetVersion(&version);
  check(ctx, "version", res == ncclSuccess && version == FAKE_NCCL_VERSION, format("%d, version %d", res, version));

  ncclUniqueId id = shareId(ctx, exp, "main");
  exp.add(FAKE_FMT_CommInitRank, VP(&run.comm), n, fakeIdHash(&id, sizeof(id)), r);
  res = ncclCommInitRank(&run.comm, n, id, r);
  if (!check(ctx, "init-rank", res == ncclSuccess && run.comm != nullptr, format("result %d", res))) return;
  ncclComm_t comm = run.comm;

  int count = -1, rank = -1, device = -1;
  exp.add(FAKE_FMT_CommCount, VP(comm), VP(&count));
  ncclCommCount(comm, &count);
  exp.add(FAKE_FMT_CommUserRank, VP(comm), VP(&rank));
  ncclCommUserRank(comm, &rank);
  exp.add(FAKE_FMT_CommCuDevice, VP(comm), VP(&device));
  ncclCommCuDevice(comm, &device);
  check(ctx, "count-rank-device", count == n && rank == r && device == r, format("%d %d %d", count, rank, device));

  alignas(16) unsigned char send[256];
  alignas(16) unsigned char recv[256] = {};
  for (int i = 0; i < 256; ++i) send[i] = static_cast<unsigned char>(r * 16 + i);

  exp.add(FAKE_FMT_AllReduce, VP(send), VP(recv), size_t(16), int(ncclFloat), int(ncclSum), VP(comm), VP(stream));
  res = ncclAllReduce(send, recv, 16, ncclFloat, ncclSum, comm, stream);
  bool pattern = true;
  for (int i = 0; i < 64; ++i) pattern = pattern && recv[i] == (send[i] ^ FAKE_NCCL_ALLREDUCE_XOR);
  check(ctx, "allreduce-result-came-back", res == ncclSuccess && pattern && recv[64] == 0, format("result %d", res));

  exp.add(FAKE_FMT_Broadcast, VP(send), VP(recv), size_t(16), int(ncclFloat), n - 1, VP(comm), VP(stream));
  res = ncclBroadcast(send, recv, 16, ncclFloat, n - 1, comm, stream);
  check(ctx, "broadcast-result-came-back", res == ncclSuccess && isRamp(recv, 64, 0xb0));
  exp.add(FAKE_FMT_Bcast, VP(recv), size_t(8), int(ncclInt32), 0, VP(comm), VP(stream));
  exp.addInner(FAKE_FMT_Broadcast, VP(recv), VP(recv), size_t(8), int(ncclInt32), 0, VP(comm), VP(stream));
  check(ctx, "bcast", ncclBcast(recv, 8, ncclInt32, 0, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_Reduce, VP(send), VP(recv), size_t(16), int(ncclFloat), int(ncclMax), 0, VP(comm), VP(stream));
  check(ctx, "reduce", ncclReduce(send, recv, 16, ncclFloat, ncclMax, 0, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_AllGather, VP(send), VP(recv), size_t(4), int(ncclBfloat16), VP(comm), VP(stream));
  check(ctx, "allgather", ncclAllGather(send, recv, 4, ncclBfloat16, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_ReduceScatter, VP(send), VP(recv), size_t(4), int(ncclFloat), int(ncclAvg), VP(comm), VP(stream));
  check(ctx, "reducescatter", ncclReduceScatter(send, recv, 4, ncclFloat, ncclAvg, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_AlltoAll, VP(send), VP(recv), size_t(2), int(ncclInt8), VP(comm), VP(stream));
  check(ctx, "alltoall", ncclAlltoAll(send, recv, 2, ncclInt8, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_Gather, VP(send), VP(recv), size_t(2), int(ncclFloat64), 1 % n, VP(comm), VP(stream));
  check(ctx, "gather", ncclGather(send, recv, 2, ncclFloat64, 1 % n, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_Scatter, VP(send), VP(recv), size_t(3), int(ncclUint8), 0, VP(comm), VP(stream));
  check(ctx, "scatter", ncclScatter(send, recv, 3, ncclUint8, 0, comm, stream) == ncclSuccess);

  std::memset(recv, 0, sizeof(recv));
  exp.add(FAKE_FMT_GroupStart);
  res = ncclGroupStart();
  exp.add(FAKE_FMT_Send, VP(send), size_t(4), int(ncclFloat), (r + 1) % n, VP(comm), VP(stream));
  res = res != ncclSuccess ? res : ncclSend(send, 4, ncclFloat, (r + 1) % n, comm, stream);
  exp.add(FAKE_FMT_Recv, VP(recv), size_t(4), int(ncclFloat), (r + n - 1) % n, VP(comm), VP(stream));
  res = res != ncclSuccess ? res : ncclRecv(recv, 4, ncclFloat, (r + n - 1) % n, comm, stream);
  exp.add(FAKE_FMT_GroupEnd);
  res = res != ncclSuccess ? res : ncclGroupEnd();
  check(ctx, "grouped-send-recv", res == ncclSuccess && isRamp(recv, 16, 0xc0), format("result %d", res));

  ncclRedOp_t premul = ncclSum;
  float scalar = 0.5f;
  exp.add(FAKE_FMT_RedOpCreatePreMulSum, VP(&premul), VP(&scalar), int(ncclFloat), int(ncclScalarHostImmediate),
          VP(comm));
  res = ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat, ncclScalarHostImmediate, comm);
  check(ctx, "premulsum-create", res == ncclSuccess && premul == FAKE_NCCL_PREMULSUM_OP, format("op %d", int(premul)));
  exp.add(FAKE_FMT_AllReduce, VP(send), VP(recv), size_t(1), int(ncclFloat), int(premul), VP(comm), VP(stream));
  check(ctx, "premulsum-allreduce", ncclAllReduce(send, recv, 1, ncclFloat, premul, comm, stream) == ncclSuccess);
  exp.add(FAKE_FMT_RedOpDestroy, int(premul), VP(comm));
  check(ctx, "premulsum-destroy", ncclRedOpDestroy(premul, comm) == ncclSuccess);

  void* handle = nullptr;
  exp.add(FAKE_FMT_CommRegister, VP(comm), VP(send), sizeof(send), VP(&handle));
  res = ncclCommRegister(comm, send, sizeof(send), &handle);
  check(ctx, "register", res == ncclSuccess && handle == VP(uintptr_t(0xfa4e0000u + sizeof(send))));
  exp.add(FAKE_FMT_CommDeregister, VP(comm), handle);
  check(ctx, "deregister", ncclCommDeregister(comm, handle) == ncclSuccess);
  ncclWindow_t win = nullptr;
  exp.add(FAKE_FMT_CommWindowRegister, VP(comm), VP(send), size_t(64), VP(&win), 1);
  res = ncclCommWindowRegister(comm, send, 64, &win, 1);
  check(ctx, "window-register", res == ncclSuccess && VP(win) == VP(uintptr_t(0xf1d00001u)));
  exp.add(FAKE_FMT_CommWindowDeregister, VP(comm), VP(win));
  check(ctx, "window-deregister", ncclCommWindowDeregister(comm, win) == ncclSuccess);

  void* memory = nullptr;
  exp.add(FAKE_FMT_MemAlloc, VP(&memory), size_t(128));
  res = ncclMemAlloc(&memory, 128);
  check(ctx, "mem-alloc", res == ncclSuccess && memory != nullptr);
  exp.add(FAKE_FMT_MemFree, memory);
  check(ctx, "mem-free", ncclMemFree(memory) == ncclSuccess);

  ncclResult_t async = ncclInternalError;
  exp.add(FAKE_FMT_CommGetAsyncError, VP(comm), VP(&async));
  res = ncclCommGetAsyncError(comm, &async);
  check(ctx, "async-error", res == ncclSuccess && async == ncclSuccess);
  exp.add(FAKE_FMT_GetErrorString, int(ncclInvalidUsage));
  std::string text = ncclGetErrorString(ncclInvalidUsage);
  check(ctx, "error-string-forwarded", text == FAKE_NCCL_ERROR_PREFIX "5", text);
  exp.add(FAKE_FMT_GetLastError, VP(comm));
  text = ncclGetLastError(comm);
  check(ctx, "last-error-forwarded", text.empty(), text);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  exp.add(FAKE_FMT_ResetDebugInit);
  ncclResetDebugInit();
#pragma GCC diagnostic pop

  run.color = r % 2;
  exp.add(FAKE_FMT_CommSplit, VP(comm), run.color, n - r, VP(&run.sub), VP(nullptr));
  res = ncclCommSplit(comm, run.color, n - r, &run.sub, nullptr);
  check(ctx, "split", res == ncclSuccess && run.sub != nullptr, format("result %d", res));
  exp.add(FAKE_FMT_AllReduce, VP(send), VP(recv), size_t(2), int(ncclInt64), int(ncclProd), VP(run.sub), VP(stream));
  check(ctx, "split-allreduce", ncclAllReduce(send, recv, 2, ncclInt64, ncclProd, run.sub, stream) == ncclSuccess);
  ncclComm_t none = reinterpret_cast<ncclComm_t>(uintptr_t(1));
  exp.add(FAKE_FMT_CommSplit, VP(comm), NCCL_SPLIT_NOCOLOR, 0, VP(&none), VP(nullptr));
  res = ncclCommSplit(comm, NCCL_SPLIT_NOCOLOR, 0, &none, nullptr);
  check(ctx, "split-nocolor", res == ncclSuccess && none == nullptr);

  int exclude[1] = {n - 1};
  ncclComm_t shrunk = nullptr;
  exp.add(FAKE_FMT_CommShrink, VP(comm), VP(exclude), 1, VP(&shrunk), VP(nullptr), NCCL_SHRINK_DEFAULT);
  res = ncclCommShrink(comm, exclude, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT);
  check(ctx, "shrink", res == ncclSuccess && shrunk != nullptr);

  ncclUniqueId id2 = shareId(ctx, exp, "second");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclComm_t configured = nullptr;
  exp.add(FAKE_FMT_CommInitRankConfig, VP(&configured), n, fakeIdHash(&id2, sizeof(id2)), r, VP(&config));
  res = ncclCommInitRankConfig(&configured, n, id2, r, &config);
  check(ctx, "init-rank-config", res == ncclSuccess && configured != nullptr);
  ncclUniqueId id3 = shareId(ctx, exp, "third");
  ncclComm_t scalable = nullptr;
  exp.add(FAKE_FMT_CommInitRankScalable, VP(&scalable), n, r, 1, VP(&id3), VP(&config));
  res = ncclCommInitRankScalable(&scalable, n, r, 1, &id3, &config);
  check(ctx, "init-rank-scalable", res == ncclSuccess && scalable != nullptr);
  ncclComm_t all[2] = {};
  int devlist[2] = {3, 5};
  exp.add(FAKE_FMT_CommInitAll, VP(all), 2, VP(devlist));
  res = ncclCommInitAll(all, 2, devlist);
  check(ctx, "init-all", res == ncclSuccess && all[0] != nullptr && all[1] != nullptr);

  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  exp.add(FAKE_FMT_GroupStart);
  ncclGroupStart();
  exp.add(FAKE_FMT_AllReduce, VP(send), VP(recv), size_t(8), int(ncclFloat), int(ncclSum), VP(comm), VP(stream));
  ncclAllReduce(send, recv, 8, ncclFloat, ncclSum, comm, stream);
  exp.add(FAKE_FMT_GroupSimulateEnd, VP(&sim));
  res = ncclGroupSimulateEnd(&sim);
  check(ctx, "group-simulate-end", res == ncclSuccess && sim.estimatedTime == FAKE_NCCL_SIM_TIME);

  exp.add(FAKE_FMT_CommRevoke, VP(comm), 0);
  check(ctx, "revoke", ncclCommRevoke(comm, 0) == ncclSuccess);
  exp.add(FAKE_FMT_CommFinalize, VP(comm));
  check(ctx, "finalize", ncclCommFinalize(comm) == ncclSuccess);
  for (ncclComm_t done : {run.sub, shrunk, configured, all[0], all[1], comm}) {
    exp.add(FAKE_FMT_CommDestroy, VP(done));
    check(ctx, "destroy", ncclCommDestroy(done) == ncclSuccess);
  }
  exp.add(FAKE_FMT_CommAbort, VP(scalable));
  check(ctx, "abort", ncclCommAbort(scalable) == ncclSuccess);

  // While the record hook is on, the shim asks the real NCCL for new communicators' size, rank and device.
  std::vector<std::string> actual = readLines(envOr("FAKE_NCCL_LOG", ""));
  std::vector<std::string> ignorable;
  if (!envOr("NCCLSHIM_HOOK_DEBUG", "").empty()) ignorable = {"ncclCommCount", "ncclCommUserRank", "ncclCommCuDevice"};
  check(ctx, "every-call-reached-the-fake-unchanged", compareLog(exp.lines(), actual, ignorable).empty(),
        compareLog(exp.lines(), actual, ignorable));
  if (!hookLogPath().empty()) checkHookLog(ctx, exp, run);
}

// ---- error paths ----

ncclComm_t initOnly(const Context& ctx, Expected& exp) {
  ncclUniqueId id = shareId(ctx, exp, "main");
  ncclComm_t comm = nullptr;
  ncclResult_t res = ncclCommInitRank(&comm, ctx.nranks, id, ctx.rank);
  check(ctx, "init-rank", res == ncclSuccess && comm != nullptr, format("result %d", res));
  return comm;
}

// FAKE_NCCL_FAIL=ncclAllReduce,ncclCommSplit (FAKE_NCCL_FAIL_CODE): the fake's errors come back.
void scenarioFail(const Context& ctx) {
  Expected exp;
  ncclComm_t comm = initOnly(ctx, exp);
  if (comm == nullptr) return;
  const int code = std::atoi(envOr("FAKE_NCCL_FAIL_CODE", "6").c_str());
  float send[4] = {1, 2, 3, 4};
  float recv[4] = {};
  ncclResult_t res = ncclAllReduce(send, recv, 4, ncclFloat, ncclSum, comm, nullptr);
  check(ctx, "allreduce-error-propagates", res == code, format("returned %d, the fake failed with %d", res, code));
  std::string last = ncclGetLastError(comm);
  check(ctx, "last-error-from-the-real-nccl", last == "fake_nccl: ncclAllReduce failed as FAKE_NCCL_FAIL asked", last);
  std::string text = ncclGetErrorString(res);
  check(ctx, "error-string-from-the-real-nccl", text == format(FAKE_NCCL_ERROR_PREFIX "%d", code), text);
  ncclComm_t sub = reinterpret_cast<ncclComm_t>(uintptr_t(1));
  res = ncclCommSplit(comm, 0, ctx.rank, &sub, nullptr);
  check(ctx, "split-error-propagates", res == code && sub == reinterpret_cast<ncclComm_t>(uintptr_t(1)));
  res = ncclBroadcast(send, recv, 4, ncclFloat, 0, comm, nullptr);
  check(ctx, "other-calls-unaffected", res == ncclSuccess);
  if (!hookLogPath().empty()) {
    bool reported = false;
    for (const HookLine& line : readHookLog(hookLogPath())) {
      reported = reported || (line.get("fn") == "ncclAllReduce" && line.get("result") == std::to_string(code));
    }
    check(ctx, "hook/failed-result-reported", reported);
  }
  check(ctx, "destroy", ncclCommDestroy(comm) == ncclSuccess);
}

// The fake built as an older NCCL (no Shrink, Revoke, windows): those calls are refused by name.
void scenarioOld(const Context& ctx) {
  Expected exp;
  ncclComm_t comm = initOnly(ctx, exp);
  if (comm == nullptr) return;
  int exclude[1] = {0};
  ncclComm_t shrunk = nullptr;
  ncclResult_t res = ncclCommShrink(comm, exclude, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT);
  std::string last = ncclGetLastError(comm);
  check(ctx, "missing-shrink-refused",
        res == ncclInvalidUsage && last.find("ncclCommShrink") != std::string::npos &&
            last.find("does not provide") != std::string::npos,
        format("result %d: ", res) + last);
  res = ncclCommRevoke(comm, 0);
  last = ncclGetLastError(comm);
  check(ctx, "missing-revoke-refused", res == ncclInvalidUsage && last.find("ncclCommRevoke") != std::string::npos,
        last);
  ncclWindow_t win = nullptr;
  res = ncclCommWindowRegister(comm, nullptr, 0, &win, 0);
  check(ctx, "missing-window-refused", res == ncclInvalidUsage);
  unsigned char send[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  unsigned char recv[8] = {};
  res = ncclAllReduce(send, recv, 8, ncclUint8, ncclSum, comm, nullptr);
  check(ctx, "present-functions-still-forward", res == ncclSuccess && recv[7] == (8 ^ FAKE_NCCL_ALLREDUCE_XOR));
  // A later error of the real NCCL (FAKE_NCCL_FAIL=ncclBroadcast) is newer than the shim's own.
  res = ncclBroadcast(send, recv, 8, ncclUint8, 0, comm, nullptr);
  last = ncclGetLastError(comm);
  check(ctx, "newest-error-wins",
        res != ncclSuccess && last == "fake_nccl: ncclBroadcast failed as FAKE_NCCL_FAIL asked", last);
  check(ctx, "destroy", ncclCommDestroy(comm) == ncclSuccess);
}

// NCCLSHIM_MODE=forward without any real NCCL (or NCCLSHIM_REAL_NCCL naming the shim itself).
void scenarioNoNccl(const Context& ctx) {
  int version = 0;
  ncclResult_t res = ncclGetVersion(&version);
  std::string last = ncclGetLastError(nullptr);
  bool named = last.find("RTLD_NEXT") != std::string::npos && last.find("libnccl.so.2") != std::string::npos &&
               last.find("NCCLSHIM_REAL_NCCL") != std::string::npos;
  check(ctx, "no-real-nccl-is-a-clear-error", res == ncclSystemError && named, format("result %d: ", res) + last);
  if (!envOr("NCCLSHIM_REAL_NCCL", "").empty()) {
    check(ctx, "never-resolves-to-itself", last.find("libncclshim itself") != std::string::npos, last);
  }
  ncclUniqueId id;
  check(ctx, "every-call-fails", ncclGetUniqueId(&id) == ncclSystemError);
}

// NCCLSHIM_MODE=auto on a machine without a GPU: GPU-free, a real sum over the ranks.
void scenarioGpuFree(const Context& ctx) {
  Expected exp;
  ncclComm_t comm = initOnly(ctx, exp);
  if (comm == nullptr) return;
  const int n = ctx.nranks;
  float send[16];
  float recv[16] = {};
  for (int i = 0; i < 16; ++i) send[i] = float(ctx.rank + i);
  ncclResult_t res = ncclAllReduce(send, recv, 16, ncclFloat, ncclSum, comm, nullptr);
  bool sum = true;
  for (int i = 0; i < 16; ++i) sum = sum && recv[i] == float(n * i + n * (n - 1) / 2);
  check(ctx, "allreduce-is-a-real-sum", res == ncclSuccess && sum, format("result %d recv[1] %g", res, recv[1]));
  check(ctx, "destroy", ncclCommDestroy(comm) == ncclSuccess);
  check(ctx, "nothing-reached-the-fake", readLines(envOr("FAKE_NCCL_LOG", "")).empty());
}

}  // namespace
}  // namespace fwdtest

extern "C" __attribute__((visibility("default"))) int forwardTestMain(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s forward|fail|old|nonccl|gpufree <rank> <nranks> <dir>\n", argv[0]);
    return 2;
  }
  fwdtest::Context ctx{argv[1], std::atoi(argv[2]), std::atoi(argv[3]), argv[4]};
  if (ctx.scenario == "forward") fwdtest::scenarioForward(ctx);
  else if (ctx.scenario == "fail") fwdtest::scenarioFail(ctx);
  else if (ctx.scenario == "old") fwdtest::scenarioOld(ctx);
  else if (ctx.scenario == "nonccl") fwdtest::scenarioNoNccl(ctx);
  else if (ctx.scenario == "gpufree") fwdtest::scenarioGpuFree(ctx);
  else return 2;
  return fwdtest::failures() == 0 ? 0 : 1;
}

#ifndef FORWARD_TEST_LIBRARY
int main(int argc, char** argv) {
  return nshim::runFenced("forward_test_program", [&] { return forwardTestMain(argc, argv); });
}
#endif
