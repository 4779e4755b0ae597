// Builds a replay Workload from an ncclshim trace (FORMAT.md): a directory of per-rank files or
// one file. Global ranks come from the files; a communicator's members are gathered by
// communicator id across the files and ordered by their rank in it; each rank's operations keep
// their recorded issue order; the calls between an outermost GroupStart and its GroupEnd share a
// group id (a group that is an uneven all-to-all has its ops marked so: uneven_alltoall.h); recorded
// durations are GPU times when the op was GPU-timed, else host durations.
// Errors name the file and line.
#pragma once

#include <string>

#include "common/status.h"
#include "trace/trace_reader.h"
#include "workload/workload.h"

namespace nshim::workload {

struct TraceLoadStats {
  size_t skippedFailedCalls = 0;  // calls that returned an error at record time (not replayed)
  size_t cutFiles = 0;            // files cut by a killed process (complete lines kept)
  size_t droppedRecords = 0;      // records the recorder lost
  size_t gpuTimedOps = 0;         // ops whose recorded time is NCCL's GPU time
  size_t cpuTimedOps = 0;         // ops whose recorded time is the CPU call only
};

// onlyRank >= 0: every file's structure (header, comms, footer) is read, but only that rank's file's
// operations (Workload::onlyRank), so memory does not grow with the number of files; the
// description then counts op records (group markers included) instead of operations.
Result<Workload> loadTraceWorkload(const std::string& path, TraceLoadStats* stats = nullptr, int onlyRank = -1);
// Takes the set (by value: each file's op records are released as soon as they are converted).
// onlyRank >= 0: only that rank's file is converted (the others' ops are ignored).
Result<Workload> workloadFromTraceSet(trace::TraceSet set, TraceLoadStats* stats = nullptr, int onlyRank = -1);

// Labels communicators by shape, since a trace does not name roles: all ranks -> "world",
// consecutive global ranks -> "tp", a constant stride -> "dp" for the smallest such stride and "pp"
// for larger ones (Megatron's order: TP contiguous, DP strided by TP, PP strided by TP*DP);
// anything else -> "comm<index>".
void labelCommsByShape(Workload& workload);

}  // namespace nshim::workload
