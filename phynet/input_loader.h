// Loading phynet's input, whatever its format: an ncclshim trace (directory or file), a SimAI
// workload text, an AICB CSV, a Chakra execution trace or PyTorch execution traces, then the
// transformations every format shares (--scale, --ops, --groups). Repetition (--iterations,
// --warmup) is done by the replay, not by expanding the workload, so a long replay costs no memory.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "phynet/replay_options.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct LoadedInput {
  Workload workload;
  InputFormat format = InputFormat::kTrace;
  size_t filteredOut = 0;          // ops removed by --ops / --groups (of the ranks loaded)
  std::vector<std::string> notes;  // things worth telling the user (cut files, skipped calls)
};

// `mpiWorldSize` is the default world size of SimAI / AICB layouts (--world-size overrides it).
// onlyRank >= 0: only that rank's operations are kept (Workload::onlyRank); filteredOut counts them.
Result<LoadedInput> loadInput(const ReplayOptions& options, int mpiWorldSize, int onlyRank = -1);

}  // namespace nshim::phynet
