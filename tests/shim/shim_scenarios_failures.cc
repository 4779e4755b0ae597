// Failure scenarios, one rank per process: ranks that disagree (count, operation) fail on every rank
// within the timeout; a rank killed with SIGKILL makes its peers fail within the timeout; and
// ncclCommAbort from another thread unblocks a rank waiting for a peer that never sends; a bad
// NCCLSHIM_TIMEOUT makes the NCCL calls fail with ncclInvalidArgument naming it (no crash, no hang).
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "shim_checks.h"

namespace shimtest {
namespace {

double timeoutSetting() {
  const char* text = std::getenv("NCCLSHIM_TIMEOUT");
  return text != nullptr ? std::atof(text) : 300;
}

// "" when `result` is an error that arrived in time and the communicator reports it.
std::string expectFailure(ncclResult_t result, double elapsed, ncclComm_t comm, const std::string& what) {
  if (result == ncclSuccess) return what + " succeeded; expected an error";
  const double limit = timeoutSetting() + 3;
  if (elapsed > limit) return what + " failed only after " + std::to_string(elapsed) + " s";
  std::string last = ncclGetLastError(comm);
  if (last.empty()) return what + " failed without a message from ncclGetLastError";
  ncclResult_t async = ncclSuccess;
  NT_TRY(ncclCommGetAsyncError(comm, &async));
  if (async == ncclSuccess || async == ncclInProgress) {
    return what + " failed (" + last + ") but ncclCommGetAsyncError reports " + std::to_string(async);
  }
  return "";
}

std::string abortQuickly(ncclComm_t comm) {
  double start = secondsNow();
  NT_TRY(ncclCommAbort(comm));
  double elapsed = secondsNow() - start;
  return elapsed < 3 ? "" : "ncclCommAbort took " + std::to_string(elapsed) + " s";
}

}  // namespace

void scenarioMismatch(const Context& ctx) {
  runCheck(ctx, "different-counts", [&]() -> std::string {
    ncclComm_t comm = nullptr;
    std::string error = initComm(ctx, "counts", &comm);
    if (!error.empty()) return error;
    size_t count = ctx.rank == 0 ? 1000 : 300000;
    std::vector<float> send(count, 1.0f), recv(count);
    double start = secondsNow();
    ncclResult_t result = ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr);
    FirstError first;
    first.keep(expectFailure(result, secondsNow() - start, comm, "allreduce with disagreeing counts"));
    first.keep(abortQuickly(comm));
    return first.message;
  });
  runCheck(ctx, "different-operations", [&]() -> std::string {
    ncclComm_t comm = nullptr;
    std::string error = initComm(ctx, "operations", &comm);
    if (!error.empty()) return error;
    std::vector<float> send(100, 1.0f), recv(100 * ctx.nranks);
    double start = secondsNow();
    ncclResult_t result = ctx.rank == 0
                              ? ncclAllReduce(send.data(), recv.data(), 100, ncclFloat32, ncclSum, comm, nullptr)
                              : ncclAllGather(send.data(), recv.data(), 100, ncclFloat32, comm, nullptr);
    FirstError first;
    first.keep(expectFailure(result, secondsNow() - start, comm, "allreduce on rank 0, allgather elsewhere"));
    first.keep(abortQuickly(comm));
    return first.message;
  });
  runCheck(ctx, "new-communicator-afterwards", [&]() -> std::string {
    ncclComm_t comm = nullptr;
    std::string error = initComm(ctx, "after", &comm);
    if (!error.empty()) return error;
    int32_t one = 1, sum = 0;
    NT_TRY(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
    NT_TRY(ncclCommDestroy(comm));
    return sum == ctx.nranks ? "" : "allreduce gave " + std::to_string(sum);
  });
}

void scenarioKilled(const Context& ctx) {
  ncclComm_t comm = nullptr;
  bool ready = runCheck(ctx, "warmup", [&]() -> std::string {
    std::string error = initComm(ctx, "killed", &comm);
    if (!error.empty()) return error;
    int32_t one = 1, sum = 0;
    NT_TRY(ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
    return sum == ctx.nranks ? "" : "warm-up allreduce gave " + std::to_string(sum);
  });
  if (!ready) return;
  // The victim dies only once every survivor has finished its warm-up: a rank can complete the
  // allreduce before its peers have taken in their last data, and an early death would fail theirs.
  if (ctx.rank != ctx.nranks - 1) {
    touchFile(ctx, "killed.warm." + std::to_string(ctx.rank));
  } else {
    for (int rank = 0; rank < ctx.nranks - 1; ++rank) {
      (void)waitForFile(ctx, "killed.warm." + std::to_string(rank), 30);
    }
    std::fflush(stdout);
    raise(SIGKILL);  // the launcher expects this rank to die by SIGKILL
  }
  runCheck(ctx, "survivors-fail-in-time", [&]() -> std::string {
    std::vector<float> send(1 << 20, 1.0f), recv(1 << 20);
    double start = secondsNow();
    ncclResult_t result = ncclAllReduce(send.data(), recv.data(), send.size(), ncclFloat32, ncclSum, comm, nullptr);
    FirstError first;
    first.keep(expectFailure(result, secondsNow() - start, comm, "allreduce with a killed rank"));
    first.keep(abortQuickly(comm));
    return first.message;
  });
}

void scenarioAbort(const Context& ctx) {
  ncclComm_t comm = nullptr;
  bool ready = runCheck(ctx, "init", [&] { return initComm(ctx, "abort", &comm); });
  if (!ready) return;
  if (ctx.rank == 0) {
    runCheck(ctx, "unblocks-a-waiting-rank", [&]() -> std::string {
      ncclResult_t aborted = ncclInternalError;
      std::thread aborter([&] {
        usleep(500 * 1000);
        aborted = ncclCommAbort(comm);
      });
      std::vector<float> recv(1000);
      double start = secondsNow();
      ncclResult_t result = ncclRecv(recv.data(), recv.size(), ncclFloat32, 1, comm, nullptr);
      double elapsed = secondsNow() - start;
      aborter.join();
      touchFile(ctx, "abort.done");
      if (result == ncclSuccess) return "ncclRecv from a silent peer succeeded";
      if (elapsed < 0.4 || elapsed > 5) return "ncclRecv returned after " + std::to_string(elapsed) + " s";
      return ncclFailure(aborted, "ncclCommAbort");
    });
    return;
  }
  runCheck(ctx, "peers-destroy-cleanly", [&]() -> std::string {
    if (!waitForFile(ctx, "abort.done", 30)) return "rank 0 never finished its abort";
    double start = secondsNow();
    NT_TRY(ncclCommDestroy(comm));
    double elapsed = secondsNow() - start;
    return elapsed < 5 ? "" : "ncclCommDestroy took " + std::to_string(elapsed) + " s";
  });
}

// Run with NCCLSHIM_TIMEOUT=inf (the launcher's setting for this scenario): a deadline that would
// overflow. Every call that starts ncclshim's work is refused at once with ncclInvalidArgument, and
// ncclGetLastError names the variable and its value.
void scenarioBadSetting(const Context& ctx) {
  auto refused = [](ncclResult_t result, const char* what) -> std::string {
    if (result != ncclInvalidArgument) {
      return std::string(what) + " returned " + std::to_string(result) + ", not ncclInvalidArgument";
    }
    const std::string last = ncclGetLastError(nullptr);
    if (last.find("NCCLSHIM_TIMEOUT=inf") == std::string::npos) {
      return std::string(what) + ": the last error does not name NCCLSHIM_TIMEOUT=inf: " + last;
    }
    return "";
  };
  runCheck(ctx, "bad-timeout-refused", [&]() -> std::string {
    ncclUniqueId id{};
    const double start = secondsNow();
    std::string error = refused(ncclGetUniqueId(&id), "ncclGetUniqueId");
    if (!error.empty()) return error;
    ncclComm_t comm = nullptr;
    error = refused(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
    if (!error.empty()) return error;
    if (comm != nullptr) return "ncclCommInitRank failed but wrote a communicator";
    return secondsNow() - start < 5 ? "" : "the refusal took " + std::to_string(secondsNow() - start) + " s";
  });
}

}  // namespace shimtest
