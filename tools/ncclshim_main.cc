// The `ncclshim` command: one entry point with subcommands (perf, summary, diff, convert, scale, plot,
// report, compare, env), each with --help. Each runs inside the fence of common/main_fence.h: an
// exception ends it with one line ("ncclshim summary: internal error while reading x.csv: ...") and
// status 70. A bad NCCLSHIM_* setting (common/settings.h) ends every command but env with status 2.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/main_fence.h"
#include "common/settings.h"
#include "tools/inspect/commands.h"

namespace {

const char* kUsage = R"(usage: ncclshim <command> [options]
commands:
  perf      nccl-tests-compatible benchmark of the NCCL API (GPU-free on libncclshim.so)
  summary   communication distribution of a trace / SimAI / AICB workload, or of a phynet report
  diff      compare two traces (or a trace and a phynet report) op by op; exit 0 same, 1 different
  convert   a trace to SimAI workload text, AICB CSV, Chrome trace JSON or CSV
  scale     a captured job written at another data-parallel or expert-parallel size (--dp N, --ep M)
  plot      PNG charts: message sizes, busbw vs size, replayed vs recorded time
  report    one self-contained HTML page for a phynet JSON report (charts, traffic matrix, timeline)
  compare   several phynet JSON reports of one workload side by side: ratios, text or HTML
  env       every NCCLSHIM_* setting: its value here and where it came from; --markdown: docs/settings.md's table
run 'ncclshim <command> --help' for the options of a command.
)";

// `ncclshim perf` is the program ncclshim-perf beside this one (tools/perf/perf_main.cc): only it
// links the engine. Returns only when it cannot be run.
int execPerf(int argc, char** argv) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path = length > 0 ? std::string(self, static_cast<size_t>(length)) : std::string("ncclshim");
  path = path.substr(0, path.find_last_of('/') + 1) + "ncclshim-perf";
  std::vector<char*> args{path.data()};
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(nullptr);
  execv(path.c_str(), args.data());
  std::fprintf(stderr, "ncclshim perf: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
  return 127;
}

int dispatch(const std::string& command, int argc, char** argv) {
  if (command != "env") {
    if (nshim::Status settings = nshim::validateSettings(); !settings.ok()) {
      std::fprintf(stderr, "ncclshim %s: %s ('ncclshim env' shows every setting)\n", command.c_str(),
                   settings.message().c_str());
      return 2;
    }
  }
  if (command == "perf") return execPerf(argc, argv);
  if (command == "summary") return nshim::tools::summaryMain(argc, argv);
  if (command == "diff") return nshim::tools::diffMain(argc, argv);
  if (command == "convert") return nshim::tools::convertMain(argc, argv);
  if (command == "scale") return nshim::tools::scaleMain(argc, argv);
  if (command == "plot") return nshim::tools::plotMain(argc, argv);
  if (command == "report") return nshim::tools::reportMain(argc, argv);
  if (command == "compare") return nshim::tools::compareMain(argc, argv);
  if (command == "env") return nshim::tools::envMain(argc, argv);
  std::fprintf(stderr, "ncclshim: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::string program = "ncclshim " + command;
  return nshim::runFenced(program.c_str(), [&] { return dispatch(command, argc - 2, argv + 2); });
}
