// Turns the record hook's ApiCall into trace records (trace/trace_record.h) and hands them to the
// process recorder: operation and group calls become OpRecords, communicator creation, split,
// destroy, abort and finalize become CommRecords (destroy/abort/finalize also flush the trace).
#pragma once

#include "libshim/api_record.h"

namespace nshim {

// True when NCCLSHIM_TRACE_DIR turned recording on (decided once).
bool traceRecordingEnabled() noexcept;
void recordCallToTrace(const ApiCall& call) noexcept;
// At a recorded call's start: prefetches what recordCallToTrace will write (a hint).
void prefetchTraceRecord() noexcept;

}  // namespace nshim
