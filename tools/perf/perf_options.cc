// Command-line parsing of `ncclshim perf`.
#include "tools/perf/perf_options.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common/env.h"
#include "tools/perf/perf_collectives.h"

namespace nshim::perf {

const char* perfUsage() {
  return R"(usage: ncclshim perf <op> [options]
  An nccl-tests-compatible benchmark written against the NCCL API. GPU-free it runs on
  libncclshim.so over host memory; -np N forks N local ranks, or run one rank per process
  under mpirun (the unique id is passed through a private file of yours, or --id-file).
ops: all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter
options:
  -np N            local ranks to launch (default: 1, or the mpirun world)
  -b SIZE          minimum size in bytes, K/M/G suffixes (default 32M)
  -e SIZE          maximum size (default 32M)
  -f FACTOR        multiplicative step (default 2)
  -i BYTES         additive step (overrides -f)
  -n ITERS         timed iterations (default 20)
  -w ITERS         warmup iterations (default 5)
  -c 0|1           check every element of the result (default 1)
  -d TYPE          int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (default float)
  -o OP            sum prod max min avg (default sum)
  -r ROOT          root for broadcast/reduce/gather/scatter (default 0)
  -z 0|1           accepted for compatibility
  --link-rate GBPS add 'ideal busbw' and 'efficiency (%)' columns for this link rate (GB/s)
  --id-file PATH   file used by mpirun-launched ranks to share the unique id (default: in
                   $XDG_RUNTIME_DIR or ${TMPDIR:-/tmp}/ncclshim-<uid>, one host only)
  --bind MODE      CPU binding of the ranks -np forks: auto (default: one CPU per rank when
                   they fit on the CPUs allowed, none when oversubscribed, as mpirun does),
                   core (always, round robin) or none
  --csv PATH       also write the rows as CSV
  -h, --help       this text
sizes follow nccl-tests: 'size' is the whole buffer (all ranks' blocks for all_gather,
reduce_scatter, alltoall, gather, scatter); busbw = algbw x 2(n-1)/n for all_reduce, (n-1)/n for
all_gather, reduce_scatter, alltoall, gather and scatter, 1 otherwise (broadcast, reduce, sendrecv).
)";
}

std::string parsePerfOptions(int argc, char** argv, PerfOptions* o, bool* help) {
  *help = false;
  int i = 0;
  if (i < argc && argv[i][0] != '-') o->op = argv[i++];
  if (!findPerfCollective(o->op)) return fmt::format("unknown op '{}'", o->op);
  for (; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      *help = true;
      return "";
    }
    if (i + 1 >= argc) return fmt::format("option {} needs a value", flag);
    std::string value = argv[++i];
    auto toInt = [&](int* out) -> std::string {
      char* end = nullptr;
      long v = std::strtol(value.c_str(), &end, 10);
      if (end == value.c_str() || *end) return fmt::format("option {}: '{}' is not an integer", flag, value);
      *out = static_cast<int>(v);
      return "";
    };
    auto toBytes = [&](size_t* out) -> std::string {
      int64_t v = parseBytes(value);
      if (v < 0) return fmt::format("option {}: '{}' is not a size like 1K, 8M", flag, value);
      *out = static_cast<size_t>(v);
      return "";
    };
    std::string error;
    if (flag == "-np") error = toInt(&o->nranks);
    else if (flag == "-b") error = toBytes(&o->minBytes);
    else if (flag == "-e") error = toBytes(&o->maxBytes);
    else if (flag == "-i") error = toBytes(&o->stepBytes);
    else if (flag == "-f") o->stepFactor = std::atof(value.c_str());
    else if (flag == "-n") error = toInt(&o->iters);
    else if (flag == "-w") error = toInt(&o->warmupIters);
    else if (flag == "-c") error = toInt(&o->check);
    else if (flag == "-z") error = toInt(&o->blocking);
    else if (flag == "-r") error = toInt(&o->root);
    else if (flag == "-d") o->dataType = value;
    else if (flag == "-o") o->redOp = value;
    else if (flag == "-g" || flag == "-t") {
      int one = 0;
      error = toInt(&one);
      if (error.empty() && one != 1) error = fmt::format("option {}: only 1 is supported GPU-free", flag);
    } else if (flag == "--link-rate") o->linkGBps = std::atof(value.c_str());
    else if (flag == "--id-file") o->idFile = value;
    else if (flag == "--csv") o->csvPath = value;
    else if (flag == "--bind") {
      if (!parseRankBinding(value, &o->binding))
        error = fmt::format("option --bind: '{}' is not auto, core or none", value);
    } else return fmt::format("unknown option '{}' (see --help)", flag);
    if (!error.empty()) return error;
  }
  if (o->maxBytes < o->minBytes) return "-e must not be smaller than -b";
  if (o->stepBytes == 0 && o->stepFactor <= 1.0) return "-f must be greater than 1";
  if (o->iters < 1 || o->warmupIters < 0) return "-n must be >= 1 and -w >= 0";
  if (o->nranks < 0 || o->nranks > 256) return "-np must be between 1 and 256";
  return "";
}

}  // namespace nshim::perf
