// Turns the record hook's ApiCall into trace records (trace/trace_record.h) and hands them to the
// process recorder: operation and group calls become OpRecords, communicator creation, split,
// destroy, abort and finalize become CommRecords (destroy/abort/finalize also flush the trace).
#pragma once

#include "libshim/api_record.h"
#include "trace/trace_record.h"

namespace nshim {

// The trace's operation number (trace::OpCode, FORMAT.md) of an API function: operations and group
// calls; -1 for the others. A constant at every API frame (api_call.h).
constexpr int16_t traceOpOf(ApiId fn) {
  using trace::OpCode;
  auto number = [](OpCode op) { return static_cast<int16_t>(op); };
  switch (fn) {
    case ApiId::kAllReduce: return number(OpCode::kAllReduce);
    case ApiId::kBroadcast:
    case ApiId::kBcast: return number(OpCode::kBroadcast);
    case ApiId::kReduce: return number(OpCode::kReduce);
    case ApiId::kAllGather: return number(OpCode::kAllGather);
    case ApiId::kReduceScatter: return number(OpCode::kReduceScatter);
    case ApiId::kAlltoAll: return number(OpCode::kAlltoAll);
    case ApiId::kGather: return number(OpCode::kGather);
    case ApiId::kScatter: return number(OpCode::kScatter);
    case ApiId::kSend: return number(OpCode::kSend);
    case ApiId::kRecv: return number(OpCode::kRecv);
    case ApiId::kGroupStart: return number(OpCode::kGroupStart);
    case ApiId::kGroupEnd: return number(OpCode::kGroupEnd);
    default: return -1;
  }
}

// True when NCCLSHIM_TRACE_DIR turned recording on (decided once).
bool traceRecordingEnabled() noexcept;
void recordCallToTrace(const ApiCall& call) noexcept;
// An operation's (or group call's, traceOp kGroupStart / kGroupEnd) record, with the tasks NCCL
// launched inside it: the recorded-operation path's end (api_call.cc), and recordCallToTrace's.
void recordOperationToTrace(int16_t traceOp, const OpArgs& args, const OpFacts& facts) noexcept;
// At a recorded call's start: prefetches what recordCallToTrace will write (a hint).
void prefetchTraceRecord() noexcept;

}  // namespace nshim
