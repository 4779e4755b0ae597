// ApiCall -> OpRecord / CommRecord translation (FORMAT.md describes every field written).
#include "libshim/trace_bridge.h"

#include "common/hot_section.h"
#include "common/self_time.h"
#include "libshim/gpu_timer.h"
#include "libshim/record_hook.h"
#include "trace/recorder.h"
#include "trace/trace_record.h"

namespace nshim {
namespace {

using trace::CommEvent;
using trace::OpCode;

// An operation's or group call's ApiCall, written as the recorded-operation path writes its own
// (api_call.cc): GPU-timed and NCCLSHIM_HOOK_DEBUG operations come this way, group calls always.
void recordOperation(const ApiCall& call) {
  const OpArgs args{call.sendbuff, call.recvbuff, call.count, call.datatype, call.redop,
                    call.root,     call.peer,     call.comm,  call.stream};
  OpFacts facts{};
  facts.commId = call.commId;
  facts.seq = call.seq;
  facts.nranks = call.nranks;
  facts.rank = call.rank;
  facts.groupDepth = call.groupDepth;
  facts.result = call.result;
  facts.startNs = call.startNs;
  facts.endNs = call.endNs;
  facts.gpuFlags = call.gpuFlags;
  facts.gpuStartNs = call.gpuStartNs;
  facts.gpuEndNs = call.gpuEndNs;
  recordOperationToTrace(call.traceOp, args, facts);
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

NSHIM_HOT_CODE void recordOperationToTrace(int16_t traceOp, const OpArgs& args, const OpFacts& facts) noexcept {
  const auto op = static_cast<OpCode>(traceOp);
  trace::OpRecord r = trace::makeOpRecord(op);
  r.hostStartNs = facts.startNs;
  r.hostEndNs = facts.endNs;
  r.groupDepth = facts.groupDepth;
  r.result = facts.result;
  if (facts.result != 0) r.flags |= trace::kOpFlagError;
  if (op != OpCode::kGroupStart && op != OpCode::kGroupEnd) {
    r.commId = facts.commId;
    r.seq = facts.seq;
    r.count = args.count;
    r.datatype = args.datatype;
    r.redop = args.redop;
    r.root = args.root;
    r.peer = args.peer;
    r.rank = facts.rank;
    r.nranks = facts.nranks;
    r.stream = reinterpret_cast<uint64_t>(args.stream);
    r.bytes = trace::kBytesByWriter;  // the writer computes traceBytes(): no tables read here
    if (args.redop >= trace::kNumBuiltinRedOps) r.flags |= trace::kOpFlagPreMulSum;
    if (args.sendbuff != nullptr && args.sendbuff == args.recvbuff) r.flags |= trace::kOpFlagInPlace;
    if (facts.gpuFlags & kGpuCaptured) r.flags |= trace::kOpFlagGraphCaptured;
    if (facts.gpuFlags & kGpuTimed) {
      r.flags |= trace::kOpFlagGpuTimed;
      r.gpuStartNs = facts.gpuStartNs;
      r.gpuEndNs = facts.gpuEndNs;
    }
  }
  // With the tasks NCCL launched inside this call, held for its record (Recorder::holdTask): the
  // call's times, one push.
  const uint64_t pushStart = selfTimeMark();
  trace::recordCallOp(r);
  addSelfTime(SelfTimeSpan::kPush, pushStart);
}

bool traceRecordingEnabled() noexcept { return trace::enabled(); }

NSHIM_HOT_CODE void prefetchTraceRecord() noexcept { trace::prefetchPush(); }

NSHIM_HOT_CODE void recordCallToTrace(const ApiCall& call) noexcept {
  const bool groupCall = call.fn == ApiId::kGroupStart || call.fn == ApiId::kGroupEnd;
  if (call.traceOp >= 0) {
    // A closed window records no group call (an ncclGroupEnd reaches here as a creation call).
    if (!groupCall || !traceWindowClosed()) recordOperation(call);
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
