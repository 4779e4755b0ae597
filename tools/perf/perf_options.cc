// Command-line options of `ncclshim perf` (perf_options.h).
#include "tools/perf/perf_options.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common/command_line.h"
#include "common/env.h"
#include "tools/perf/perf_collectives.h"

namespace nshim::perf {
namespace {

int toInt(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  long v = std::strtol(value.c_str(), &end, 10);
  if (end == value.c_str() || *end) refuseValue(fmt::format("option {}: '{}' is not an integer", flag, value));
  return static_cast<int>(v);
}

size_t toBytes(const std::string& flag, const std::string& value) {
  int64_t v = parseBytes(value);
  if (v < 0) refuseValue(fmt::format("option {}: '{}' is not a size like 1K, 8M", flag, value));
  return static_cast<size_t>(v);
}

void addInt(CLI::App& app, const std::string& flag, const std::string& valueName, int* target,
            const std::string& help) {
  addValueOption(
      app, flag, valueName, [flag, target](const std::string& v) { *target = toInt(flag, v); }, help);
}

void addSize(CLI::App& app, const std::string& flag, const std::string& valueName, size_t* target,
             const std::string& help) {
  addValueOption(
      app, flag, valueName, [flag, target](const std::string& v) { *target = toBytes(flag, v); }, help);
}

}  // namespace

std::vector<std::string> rewriteNcclTestsFlags(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "-np" || arg.rfind("-np=", 0) == 0) arg = "-" + arg;
  }
  return args;
}

void addPerfOptions(CLI::App& app, PerfOptions* o) {
  app.add_option_function<std::string>(
      "op",
      [o](const std::string& op) {
        if (!findPerfCollective(op)) refuseValue(fmt::format("unknown op '{}'", op));
        o->op = op;
      },
      "the collective");
  addInt(app, "--np", "N", &o->nranks, "local ranks to launch, also -np N (default: 1, or the mpirun world)");
  addSize(app, "-b", "SIZE", &o->minBytes, "minimum size in bytes, K/M/G suffixes (default 32M)");
  addSize(app, "-e", "SIZE", &o->maxBytes, "maximum size (default 32M)");
  addValueOption(
      app, "-f", "FACTOR", [o](const std::string& v) { o->stepFactor = std::atof(v.c_str()); },
      "multiplicative step (default 2)");
  addSize(app, "-i", "BYTES", &o->stepBytes, "additive step (overrides -f)");
  addInt(app, "-n", "ITERS", &o->iters, "timed iterations (default 20)");
  addInt(app, "-w", "ITERS", &o->warmupIters, "warmup iterations (default 5)");
  addInt(app, "-c", "0|1", &o->check, "check every element of the result (default 1)");
  addValueOption(
      app, "-d", "TYPE", [o](const std::string& v) { o->dataType = v; },
      "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (default float)");
  addValueOption(
      app, "-o", "OP", [o](const std::string& v) { o->redOp = v; }, "sum prod max min avg (default sum)");
  addInt(app, "-r", "ROOT", &o->root, "root for broadcast/reduce/gather/scatter (default 0)");
  addInt(app, "-z", "0|1", &o->blocking, "accepted for compatibility");
  for (const char* name : {"-g", "-t"}) {
    const std::string flag = name;
    addValueOption(
        app, flag, "1",
        [flag](const std::string& v) {
          if (toInt(flag, v) != 1) refuseValue(fmt::format("option {}: only 1 is supported GPU-free", flag));
        },
        flag == "-g" ? "GPUs per thread: 1 (nccl-tests' flag)" : "threads per process: 1 (nccl-tests' flag)");
  }
  addValueOption(
      app, "--link-rate", "GBPS", [o](const std::string& v) { o->linkGBps = std::atof(v.c_str()); },
      "add 'ideal busbw' and 'efficiency (%)' columns for this link rate (GB/s)");
  addValueOption(
      app, "--id-file", "PATH", [o](const std::string& v) { o->idFile = v; },
      "file used by mpirun-launched ranks to share the unique id (default: in\n"
      "$XDG_RUNTIME_DIR or ${TMPDIR:-/tmp}/ncclshim-<uid>, one host only)");
  addValueOption(
      app, "--bind", "MODE",
      [o](const std::string& v) {
        if (!parseRankBinding(v, &o->binding))
          refuseValue(fmt::format("option --bind: '{}' is not auto, core or none", v));
      },
      "CPU binding of the ranks -np forks: auto (default: one CPU per rank when\n"
      "they fit on the CPUs allowed, none when oversubscribed, as mpirun does),\n"
      "core (always, round robin) or none");
  addValueOption(
      app, "--csv", "PATH", [o](const std::string& v) { o->csvPath = v; }, "also write the rows as CSV");
  app.callback([o] {
    if (o->maxBytes < o->minBytes) refuseValue("-e must not be smaller than -b");
    if (o->stepBytes == 0 && o->stepFactor <= 1.0) refuseValue("-f must be greater than 1");
    if (o->iters < 1 || o->warmupIters < 0) refuseValue("-n must be >= 1 and -w >= 0");
    if (o->nranks < 0 || o->nranks > 256) refuseValue("-np must be between 1 and 256");
  });
}

}  // namespace nshim::perf
