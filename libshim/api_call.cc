// The slow half of the API frame, run only while the record hook is on: communicator state for a
// call, and what creation calls register. Shape queries (size, rank, device) go to the backend
// through the guard only, so they reach the real NCCL in forward mode but are not themselves reported.
#include "libshim/api_call.h"

#include "common/hot_section.h"
#include "common/self_time.h"

namespace nshim {
namespace {

constexpr int32_t kShapeFailed = -2;  // CommState::nranks after a query that failed: do not retry

// Asks the backend for a communicator's size, rank and device where they are unknown (through the
// guard, not the frame: the queries are not reported).
void queryShape(void* comm, CommState& state) {
  if (activeBackend() == nullptr) return;
  auto handle = static_cast<ncclComm_t>(comm);
  int value = -1;
  if (state.nranks.load(std::memory_order_relaxed) < 0) {
    int nranks = -1;
    int rank = -1;
    auto query = [&](const NcclFunctions& backend) {
      ncclResult_t result = backend.ncclCommCount(handle, &nranks);
      return result == ncclSuccess ? backend.ncclCommUserRank(handle, &rank) : result;
    };
    bool ok = guardedCall("ncclCommCount", query) == ncclSuccess;
    state.rank.store(ok ? rank : -1, std::memory_order_relaxed);
    state.nranks.store(ok ? nranks : kShapeFailed, std::memory_order_relaxed);
  }
  if (state.device.load(std::memory_order_relaxed) < 0 &&
      guardedCall("ncclCommCuDevice", [&](const NcclFunctions& backend) {
        return backend.ncclCommCuDevice(handle, &value);
      }) == ncclSuccess) {
    state.device.store(value, std::memory_order_relaxed);
  }
}

}  // namespace

// Read by every recorded call and every ncclGroupEnd: in the thread's CurrentApiOp (initial-exec, no
// TLS call; api_current_op.h). tCurrentApiOp.deferred counts the entries of deferredOfThread(),
// which is touched only when there are some.
int& groupDepthOfThread() noexcept { return tCurrentApiOp.groupDepth; }

namespace {

struct DeferredCreation {
  ncclComm_t* out;
  CommCreated made;
};

std::vector<DeferredCreation>& deferredOfThread() {
  static thread_local std::vector<DeferredCreation> deferred;
  return deferred;
}

}  // namespace

CommCreated registerCreatedAt(ncclResult_t result, ncclComm_t* out, CommCreated made, bool deferrable) {
  made.comm = createdSomething(result) && out != nullptr ? *out : nullptr;
  if (made.comm != nullptr) return registerCreated(made);
  if (deferrable && result == ncclSuccess && out != nullptr && groupDepthOfThread() > 0) {
    deferredOfThread().push_back(DeferredCreation{out, made});
    ++tCurrentApiOp.deferred;
  }
  return made;
}

void leaveGroup(CreatedComms& made) {
  int& depth = groupDepthOfThread();
  if (depth > 0) --depth;
  if (depth > 0 || tCurrentApiOp.deferred == 0) return;
  std::vector<DeferredCreation>& deferred = deferredOfThread();
  for (DeferredCreation& entry : deferred) {
    entry.made.comm = *entry.out;
    if (entry.made.comm != nullptr) made.push_back(registerCreated(entry.made));
  }
  deferred.clear();
  tCurrentApiOp.deferred = 0;
}

NSHIM_HOT_CODE void beginRecordedCall(ApiCall& call) noexcept {
  call.groupDepth = groupDepthOfThread();
  if (call.comm != nullptr) {
    if (CommState* state = findComm(call.comm)) {
      // A split comm created non-blocking was not ready at creation: by its first operation it is.
      if (isOperation(call.fn) && state->nranks.load(std::memory_order_relaxed) == -1) {
        try {
          queryShape(call.comm, *state);
        } catch (...) {
        }
      }
      call.commId = state->commId;
      int32_t nranks = state->nranks.load(std::memory_order_relaxed);
      call.nranks = nranks >= 0 ? nranks : -1;
      call.rank = state->rank.load(std::memory_order_relaxed);
      if (isOperation(call.fn)) {
        // NCCL's calls on one communicator come from one thread at a time (NCCL does not allow
        // concurrent calls on a communicator), so no atomic add: a locked instruction here waits for
        // every store the job has in flight, the CUDA driver's writes to the GPU included.
        const uint64_t seqStart = selfTimeMark();
        call.seq = state->nextSeq.load(std::memory_order_relaxed);
        state->nextSeq.store(call.seq + 1, std::memory_order_relaxed);
        addSelfTime(SelfTimeSpan::kCommSeq, seqStart);
      }
    }
  }
  call.startNs = tscNowNs();
}

CommCreated registerCreated(CommCreated made) noexcept {
  if (made.comm != nullptr) registerComm(made.comm, made.commId, made.nranks, made.rank);
  return made;
}

void completeCreated(CreatedComms& comms, ncclResult_t result) noexcept {
  if (result != ncclSuccess) return;  // failed, or still initializing (first operation completes it)
  for (CommCreated& made : comms) {
    CommState* state = findComm(made.comm);
    if (state == nullptr) continue;
    try {
      queryShape(made.comm, *state);
    } catch (...) {
    }
    int32_t nranks = state->nranks.load(std::memory_order_relaxed);
    made.nranks = nranks >= 0 ? nranks : -1;
    made.rank = state->rank.load(std::memory_order_relaxed);
    made.device = state->device.load(std::memory_order_relaxed);
  }
}

}  // namespace nshim
