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

#include "common/command_line.h"
#include "common/main_fence.h"
#include "common/settings.h"
#include "tools/inspect/commands.h"

namespace {

// `ncclshim perf` is the program ncclshim-perf beside this one (tools/perf/perf_main.cc): only it
// links the engine. Returns only when it cannot be run.
int execPerf(int argc, char** argv) {  // NOLINT: the signature of every command's main
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

struct SubCommand {
  const char* name;
  const char* summary;
  int (*main)(int argc, char** argv);
};

const SubCommand kCommands[] = {
    {"perf", "nccl-tests-compatible benchmark of the NCCL API (GPU-free on libncclshim.so)", execPerf},
    {"summary", "communication distribution of a trace / SimAI / AICB workload, or of a phynet report",
     nshim::tools::summaryMain},
    {"diff", "compare two traces (or a trace and a phynet report) op by op; exit 0 same, 1 different",
     nshim::tools::diffMain},
    {"convert", "a trace to SimAI workload text, AICB CSV, Chrome trace JSON or CSV", nshim::tools::convertMain},
    {"scale", "a captured job written at another data-parallel or expert-parallel size (--dp N, --ep M)",
     nshim::tools::scaleMain},
    {"plot", "PNG charts: message sizes, busbw vs size, replayed vs recorded time", nshim::tools::plotMain},
    {"report", "one self-contained HTML page for a phynet JSON report (charts, traffic matrix, timeline)",
     nshim::tools::reportMain},
    {"compare", "several phynet JSON reports of one workload side by side: ratios, text or HTML",
     nshim::tools::compareMain},
    {"env", "every NCCLSHIM_* setting: its value here and where it came from; --markdown: docs/settings.md's table",
     nshim::tools::envMain},
};

// Runs one command with the arguments after its name; a bad NCCLSHIM_* setting ends all but env.
int dispatch(const SubCommand& command, std::vector<std::string> args) {
  if (std::strcmp(command.name, "env") != 0) {
    if (nshim::Status settings = nshim::validateSettings(); !settings.ok()) {
      std::fprintf(stderr, "ncclshim %s: %s ('ncclshim env' shows every setting)\n", command.name,
                   settings.message().c_str());
      return 2;
    }
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return command.main(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

// The commands as CLI11 subcommands (for the generated help and the choice of one); each reads its
// own arguments (runCommand, common/command_line.h), so a subcommand passes them on untouched.
int main(int argc, char** argv) {
  CLI::App app("", "ncclshim");
  nshim::describeCommand(app, "<command> [options]", "",
                         "run 'ncclshim <command> --help' for the options of a command.");
  app.allow_extras();
  for (const SubCommand& command : kCommands) { app.add_subcommand(command.name, command.summary)->group("commands"); }
  if (argc < 2) {
    nshim::printHelpText(nshim::commandHelp(app), stderr);
    return 2;
  }
  nshim::Result<nshim::Parsed> parsed = nshim::parseCommandLine(app, 1, argv + 1);  // the command's name alone
  if (parsed.ok() && *parsed == nshim::Parsed::kHelp) {
    nshim::printHelpText(nshim::commandHelp(app), stdout);
    return 0;
  }
  const std::string name = argv[1];
  for (const SubCommand& command : kCommands) {
    if (name != command.name) continue;
    const std::string program = "ncclshim " + name;
    return nshim::runFenced(program.c_str(), [&] { return dispatch(command, {argv + 2, argv + argc}); });
  }
  std::fprintf(stderr, "ncclshim: unknown command '%s' (see --help)\n", name.c_str());
  return 2;
}
