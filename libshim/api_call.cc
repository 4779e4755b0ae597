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
  if (!leaveGroupLevel()) return;
  std::vector<DeferredCreation>& deferred = deferredOfThread();
  for (DeferredCreation& entry : deferred) {
    entry.made.comm = *entry.out;
    if (entry.made.comm != nullptr) made.push_back(registerCreated(entry.made));
  }
  deferred.clear();
  tCurrentApiOp.deferred = 0;
}

namespace {

// The state of `comm` into `facts` (commId 0, seq 0, size and rank -1 for a communicator not created
// through the shim), and for an operation its sequence number, advanced.
NSHIM_HOT_CODE void readCommState(void* comm, bool operation, OpFacts& facts) noexcept {
  facts.commId = 0;
  facts.seq = 0;
  facts.nranks = -1;
  facts.rank = -1;
  CommState* state = comm != nullptr ? findComm(comm) : nullptr;
  if (state == nullptr) return;
  // A split comm created non-blocking was not ready at creation: by its first operation it is.
  if (operation && state->nranks.load(std::memory_order_relaxed) == -1) {
    try {
      queryShape(comm, *state);
    } catch (...) {}
  }
  facts.commId = state->commId;
  const int32_t nranks = state->nranks.load(std::memory_order_relaxed);
  facts.nranks = nranks >= 0 ? nranks : -1;
  facts.rank = state->rank.load(std::memory_order_relaxed);
  if (operation) {
    // NCCL's calls on one communicator come from one thread at a time (NCCL does not allow
    // concurrent calls on a communicator), so no atomic add: a locked instruction here waits for
    // every store the job has in flight, the CUDA driver's writes to the GPU included.
    const uint64_t seqStart = selfTimeMark();
    facts.seq = state->nextSeq.load(std::memory_order_relaxed);
    state->nextSeq.store(facts.seq + 1, std::memory_order_relaxed);
    addSelfTime(SelfTimeSpan::kCommSeq, seqStart);
  }
}

// The ApiCall of a recorded operation, for the hook's other consumers (NCCLSHIM_HOOK_DEBUG) and the
// GPU timer.
ApiCall apiCallOf(const RecordedOp& op) noexcept {
  ApiCall call;
  call.fn = op.fn;
  call.traceOp = op.traceOp;
  call.sendbuff = op.args->sendbuff;
  call.recvbuff = op.args->recvbuff;
  call.count = op.args->count;
  call.datatype = op.args->datatype;
  call.redop = op.args->redop;
  call.root = op.args->root;
  call.peer = op.args->peer;
  call.comm = op.args->comm;
  call.stream = op.args->stream;
  call.commId = op.facts.commId;
  call.seq = op.facts.seq;
  call.nranks = op.facts.nranks;
  call.rank = op.facts.rank;
  call.groupDepth = op.facts.groupDepth;
  call.result = op.facts.result;
  call.startNs = op.facts.startNs;
  call.endNs = op.facts.endNs;
  call.gpuFlags = op.facts.gpuFlags;
  return call;
}

}  // namespace

NSHIM_HOT_CODE void beginRecordedCall(ApiCall& call) noexcept {
  OpFacts facts{};
  readCommState(call.comm, false, facts);  // not an operation (operationCall): no sequence number
  call.commId = facts.commId;
  call.seq = facts.seq;
  call.nranks = facts.nranks;
  call.rank = facts.rank;
  call.groupDepth = groupDepthOfThread();
  call.startNs = tscNowNs();
}

NSHIM_HOT_CODE RecordedOp beginRecordedOperation(ApiId id, int16_t traceOp, const OpArgs& args) noexcept {
  RecordedOp op;
  // The trace alone (the hook's usual state): straight to its hint, as finish goes to its record.
  if (__builtin_expect(traceOnlyState(detail::hookState()), 1)) {
    prefetchTraceRecord();
  } else {
    prefetchRecordPath();
  }
  op.args = &args;
  op.fn = id;
  op.traceOp = traceOp;
  const uint64_t beginStart = selfTimeMark();
  op.facts.groupDepth = tCurrentApiOp.groupDepth;
  op.facts.gpuFlags = 0;
  op.facts.gpuStartNs = 0;
  op.facts.gpuEndNs = 0;
  readCommState(args.comm, true, op.facts);
  op.facts.startNs = tscNowNs();
  addSelfTime(SelfTimeSpan::kBeginCall, beginStart);
  addEmptySpan();
  // Timed when asked: outside a group the operation runs on its stream now; inside one, NCCL launches
  // it at the group's end, where its end event is recorded (gpuSpanFinishGrouped).
  op.timed = gpuTimingEnabled();
  if (op.timed) op.span = gpuSpanBegin(args.stream);
  // The profiler plugin joins NCCL's decisions for this call to its record (api_current_op.h).
  // Untimed, the record is written as soon as the call returns: NCCL's tasks of it may wait for it.
  enterApiOp(op.facts.commId, op.facts.seq, !op.timed, op.facts.startNs);
  return op;
}

NSHIM_HOT_CODE void finishRecordedOperation(RecordedOp& op, ncclResult_t result) noexcept {
  leaveApiOp();
  op.facts.endNs = tscNowNs();
  op.facts.result = result;
  // Only the trace wants it (the hook's usual state): straight to the trace bridge.
  if (__builtin_expect(!op.timed && traceOnlyState(detail::hookState()), 1)) {
    recordOperationToTrace(op.traceOp, *op.args, op.facts);
    return;
  }
  if (op.timed && op.span.captured) op.facts.gpuFlags |= kGpuCaptured;
  ApiCall call = apiCallOf(op);
  if (op.timed && op.facts.groupDepth > 0) return gpuSpanFinishGrouped(op.span, call);
  if (!op.timed || !gpuSpanFinish(op.span, call.stream, call)) recordApiCall(call);
}

NSHIM_HOT_CODE void recordGroupCall(int16_t traceOp, int32_t groupDepth, int64_t startNs,
                                    ncclResult_t result) noexcept {
  // A group call has no arguments and no communicator: the bridge writes neither for it.
  static constexpr OpArgs kNoArgs{nullptr, nullptr, 0, kHookNone, kHookNone, kHookNone, kHookNone, nullptr, nullptr};
  OpFacts facts{};
  facts.nranks = -1;
  facts.rank = -1;
  facts.groupDepth = groupDepth;
  facts.result = result;
  facts.startNs = startNs;
  facts.endNs = tscNowNs();
  recordOperationToTrace(traceOp, kNoArgs, facts);
}

NSHIM_HOT_CODE void recordTimedGroupCall(ApiId id, int16_t traceOp, int32_t groupDepth, int64_t startNs,
                                         ncclResult_t result) noexcept {
  ApiCall call;
  call.fn = id;
  call.traceOp = traceOp;
  call.result = result;
  call.startNs = startNs;
  call.endNs = tscNowNs();
  call.groupDepth = groupDepth;
  gpuTimerRecordGroupCall(&call, id == ApiId::kGroupEnd && groupDepth <= 1);
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
    } catch (...) {}
    int32_t nranks = state->nranks.load(std::memory_order_relaxed);
    made.nranks = nranks >= 0 ? nranks : -1;
    made.rank = state->rank.load(std::memory_order_relaxed);
    made.device = state->device.load(std::memory_order_relaxed);
  }
}

}  // namespace nshim
