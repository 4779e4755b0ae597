// Options of `ncclshim perf`, with nccl-tests' flag names (-b -e -f -i -n -w -c -d -o -r -z -np), read
// through common/command_line.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/perf/rank_binding.h"

namespace nshim::perf {

struct PerfOptions {
  std::string op =
      "all_reduce";            // all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter
  int nranks = 0;              // -np: local ranks to fork; 0 = one rank per process (mpirun)
  size_t minBytes = 32 << 20;  // -b
  size_t maxBytes = 32 << 20;  // -e
  double stepFactor = 2;       // -f (multiplicative)
  size_t stepBytes = 0;        // -i (additive; overrides -f when set)
  int iters = 20;              // -n
  int warmupIters = 5;         // -w
  int check = 1;               // -c: verify results (every element)
  std::string dataType = "float";            // -d
  std::string redOp = "sum";                 // -o
  int root = 0;                              // -r
  int blocking = 1;                          // -z accepted for compatibility (always blocking GPU-free)
  double linkGBps = 0;                       // --link-rate: adds ideal busbw and efficiency columns
  std::string idFile;                        // --id-file: how mpirun-launched ranks share the unique id
  std::string csvPath;                       // --csv: also write rows as CSV
  RankBinding binding = RankBinding::kAuto;  // --bind: CPU binding of the ranks -np forks
};

// The command `ncclshim perf` (common/command_line.h) with every option storing into *options
// (which must outlive the parse); nccl-tests' -np is read as --np (rewriteNcclTestsFlags).
void addPerfOptions(CLI::App& app, PerfOptions* options);
// argv with nccl-tests' one-dash long flag -np spelled --np, as CLI11 reads long options.
std::vector<std::string> rewriteNcclTestsFlags(int argc, char** argv);

}  // namespace nshim::perf
