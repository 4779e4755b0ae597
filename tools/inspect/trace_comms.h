// A lenient view of a raw trace for the tools that show every record as it was written (chrome and
// CSV export, diff): the global rank of each file and the members and role label of every
// communicator. Unlike phynet's loader it never refuses a trace: a missing member stays -1, a file
// without a usable global rank gets its position, and the problems become notes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"
#include "workload/workload.h"

namespace nshim::tools {

struct TraceView {
  trace::TraceSet set;
  std::vector<int> fileRank;               // global rank of set.files[i]
  int worldSize = 0;                       // number of files
  std::vector<workload::CommGroup> comms;  // by creation (first comm record on the lowest rank)
  std::map<uint64_t, size_t> commIndex;    // id -> index in comms
  std::vector<std::string> notes;

  const workload::CommGroup* findComm(uint64_t id) const;
  // Wall-clock time (ns since the epoch) of a CLOCK_MONOTONIC stamp of file `file`.
  int64_t wallNs(size_t file, int64_t monotonicNs) const;
};

TraceView buildTraceView(trace::TraceSet set);
Result<TraceView> readTraceView(const std::string& path);

// The op records of one file in recording order (by n), group calls included.
std::vector<const trace::OpEntry*> opsInOrder(const trace::TraceFile& file);

}  // namespace nshim::tools
