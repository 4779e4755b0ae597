// Exporting a raw trace (trace_comms.h view) record for record:
//  * Chrome trace event JSON (opens in Perfetto / chrome://tracing): one process per global rank
//    (pid = rank, named "rank R (host, pid P)"), one thread per communicator (tid = 1 + its index in
//    creation order, named "<label> <id> (<n> ranks)"), tid 0 for ncclGroupStart/End. Every op
//    record is one complete ("X") event named after the op, with ts / dur in microseconds from the
//    earliest op of the job (wall clock: each file's monotonic stamps shifted by its header's
//    start_realtime_ns), GPU times when the op was GPU-timed, else the host call; args hold every
//    field of the record.
//  * CSV: one row per op record (group calls included), columns in docs/TOOLS.md.
#pragma once

#include <cstdio>

#include "tools/inspect/trace_comms.h"

namespace nshim::tools {

// Returns the number of op events written.
size_t writeChromeTrace(FILE* out, const TraceView& view);
// Returns the number of rows written.
size_t writeOpCsv(FILE* out, const TraceView& view);

}  // namespace nshim::tools
