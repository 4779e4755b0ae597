// `ncclshim-perf`: the one sub-command that runs collectives, in a program of its own, so that the
// `ncclshim` of the file commands (summary, diff, convert, ...) neither links nor loads the engine.
// `ncclshim perf ARGS` executes this program (beside it in the same folder) with ARGS; run directly
// it behaves the same. Inside the fence of common/main_fence.h, like every sub-command (naming the op
// it runs: perf_launch.cc).
#include <cstdio>

#include "common/main_fence.h"
#include "common/settings.h"
#include "tools/perf/perf_launch.h"

int main(int argc, char** argv) {
  return nshim::runFenced("ncclshim perf", [&] {
    if (nshim::Status settings = nshim::validateSettings(); !settings.ok()) {
      std::fprintf(stderr, "ncclshim perf: %s ('ncclshim env' shows every setting)\n", settings.message().c_str());
      return 2;
    }
    return nshim::perf::perfMain(argc - 1, argv + 1);
  });
}
