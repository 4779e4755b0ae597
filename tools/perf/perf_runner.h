// One rank of `ncclshim perf`: initialises the communicator from a unique id, sweeps the sizes,
// times out-of-place and in-place runs, checks every element, and (on rank 0) prints the table.
#pragma once

#include <nccl.h>

#include "tools/perf/perf_options.h"

namespace nshim::perf {

// Returns the process exit code: 0 when every size ran and #wrong was 0 everywhere.
int runPerfRank(const PerfOptions& options, const ncclUniqueId& id, int rank, int nranks);

}  // namespace nshim::perf
