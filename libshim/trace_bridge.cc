// ApiCall -> OpRecord / CommRecord translation (FORMAT.md describes every field written).
#include "libshim/trace_bridge.h"

#include "common/hot_section.h"
#include "common/self_time.h"
#include "libshim/gpu_timer.h"
#include "trace/recorder.h"
#include "trace/trace_record.h"

namespace nshim {
namespace {

using trace::CommEvent;
using trace::OpCode;

NSHIM_HOT_CODE void recordOperation(const ApiCall& call, OpCode op) {
  trace::OpRecord r = trace::makeOpRecord(op);
  r.hostStartNs = call.startNs;
  r.hostEndNs = call.endNs;
  r.groupDepth = call.groupDepth;
  r.result = call.result;
  if (call.result != 0) r.flags |= trace::kOpFlagError;
  if (op != OpCode::kGroupStart && op != OpCode::kGroupEnd) {
    r.commId = call.commId;
    r.seq = call.seq;
    r.count = call.count;
    r.datatype = call.datatype;
    r.redop = call.redop;
    r.root = call.root;
    r.peer = call.peer;
    r.rank = call.rank;
    r.nranks = call.nranks;
    r.stream = reinterpret_cast<uint64_t>(call.stream);
    r.bytes = trace::kBytesByWriter;  // the writer computes traceBytes(): no tables read here
    if (call.redop >= trace::kNumBuiltinRedOps) r.flags |= trace::kOpFlagPreMulSum;
    if (call.sendbuff != nullptr && call.sendbuff == call.recvbuff) r.flags |= trace::kOpFlagInPlace;
    if (call.gpuFlags & kGpuCaptured) r.flags |= trace::kOpFlagGraphCaptured;
    if (call.gpuFlags & kGpuTimed) {
      r.flags |= trace::kOpFlagGpuTimed;
      r.gpuStartNs = call.gpuStartNs;
      r.gpuEndNs = call.gpuEndNs;
    }
  }
  // With the tasks NCCL launched inside this call, held for its record (Recorder::holdTask): the
  // call's times, one push.
  const uint64_t pushStart = selfTimeMark();
  trace::recordCallOp(r);
  addSelfTime(SelfTimeSpan::kPush, pushStart);
}

void recordCreated(const ApiCall& call) {
  for (int i = 0; i < call.numCreated; ++i) {
    const CommCreated& made = call.created[i];
    if (made.comm == nullptr) continue;  // failed, or NCCL_SPLIT_NOCOLOR: no communicator
    bool split = made.parentId != 0;
    trace::CommRecord r = trace::makeCommRecord(split ? CommEvent::kSplit : CommEvent::kInit);
    r.commId = made.commId;
    r.parentId = made.parentId;
    r.splitSeq = made.splitSeq;
    r.color = split ? made.color : 0;
    r.key = split ? made.key : 0;
    r.nranks = made.nranks;
    r.rank = made.rank;
    r.cudaDevice = made.device;
    r.timestampNs = call.endNs;
    trace::recordComm(r);
  }
}

void recordLifecycle(const ApiCall& call, CommEvent event) {
  if (call.commId == 0) return;
  trace::CommRecord r = trace::makeCommRecord(event);
  r.commId = call.commId;
  r.nranks = call.nranks;
  r.rank = call.rank;
  r.timestampNs = call.endNs;
  gpuTimerDrain();  // GPU-timed operations of this communicator are recorded before it goes
  trace::recordComm(r);
  (void)trace::flush();  // a destroyed communicator's records are on disk when the call returns
}

}  // namespace

bool traceRecordingEnabled() noexcept { return trace::enabled(); }

NSHIM_HOT_CODE void prefetchTraceRecord() noexcept { trace::prefetchPush(); }

NSHIM_HOT_CODE void recordCallToTrace(const ApiCall& call) noexcept {
  if (call.traceOp >= 0) {
    recordOperation(call, static_cast<OpCode>(call.traceOp));
  } else if (call.fn == ApiId::kCommDestroy) {
    recordLifecycle(call, CommEvent::kDestroy);
  } else if (call.fn == ApiId::kCommAbort) {
    recordLifecycle(call, CommEvent::kAbort);
  } else if (call.fn == ApiId::kCommFinalize) {
    recordLifecycle(call, CommEvent::kFinalize);
  }
  // A GroupEnd can also report communicators that appeared only at its end (GPU-free splits).
  if (call.numCreated > 0) recordCreated(call);
}

}  // namespace nshim
