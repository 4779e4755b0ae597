// `ncclshim diff <a> <b>`: two traces (or workloads, or a trace and a phynet report) compared op by
// op per rank and communicator; prints the first divergence; exit 0 same, 1 different, 2 error.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "tools/inspect/command_line.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/diff_view.h"
#include "tools/inspect/tool_input.h"
#include "tools/inspect/trace_diff.h"

namespace nshim::tools {
namespace {

const char* kDiffUsage = R"(usage: ncclshim diff <a> <b> [options]
  Compares two inputs op by op, per rank and per communicator, and names the first divergence
  (rank, communicator, seq, field, both values). Inputs: ncclshim traces (directory or .jsonl), SimAI
  .txt or AICB .csv workloads, or one phynet report .csv (compared with the other input as phynet
  replayed it: collectives once per communicator, sends as sendrecv; fields op, count, dtype, peer,
  nranks, bytes). Communicators are matched by members and creation order (by id with a report).
  Exit status: 0 same, 1 different, 2 error.
options:
  --max N          divergences listed (default 10)
  --iteration N    the report's measured iteration to compare (default 0)
  -q, --quiet      print nothing, only the exit status
  -h, --help       this text
)";

struct DiffArgs {
  std::string inputs[2];
  int given = 0;
  size_t maxListed = 10;
  int iteration = 0;
  bool quiet = false;
  bool help = false;
  InputOptions inputOptions;
};

std::string parseArgs(int argc, char** argv, DiffArgs* a) {
  CommandLineHandlers handlers;
  handlers.takeSwitch = [a](const std::string& flag) {
    if (flag != "-q" && flag != "--quiet") return false;
    a->quiet = true;
    return true;
  };
  handlers.takeInput = [a](const std::string& argument) -> std::string {
    if (a->given == 2) return fmt::format("more than two inputs ('{}')", argument);
    a->inputs[a->given++] = argument;
    return "";
  };
  handlers.takeOption = [a](const std::string& flag, const std::string& value) -> std::optional<std::string> {
    int64_t number = 0;
    if (flag != "--max" && flag != "--iteration") return std::nullopt;
    if (!parseCount(value, &number)) return fmt::format("{}: '{}' is not a count", flag, value);
    if (flag == "--max") a->maxListed = static_cast<size_t>(std::max<int64_t>(number, 1));
    else a->iteration = static_cast<int>(number);
    return "";
  };
  std::string error = walkCommandLine(argc, argv, &a->inputOptions, &a->help, handlers);
  if (!error.empty() || a->help) return error;
  if (a->given != 2) return "two inputs are needed";
  return "";
}

// A trace or workload as a diff view (nullopt for a report, loaded later against the other side).
Result<std::optional<DiffSide>> loadSide(const std::string& path, InputKind kind, const InputOptions& options) {
  if (kind == InputKind::kReport) return std::optional<DiffSide>();
  if (kind == InputKind::kTrace) {
    NS_ASSIGN_OR_RETURN(TraceView view, readTraceView(path));
    return std::optional<DiffSide>(diffSideFromTrace(view, path));
  }
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(path, kind, options));
  return std::optional<DiffSide>(diffSideFromWorkload(loaded.workload, path, inputKindName(kind)));
}

Result<int> run(const DiffArgs& a) {
  InputKind kinds[2];
  std::optional<DiffSide> sides[2];
  for (int i = 0; i < 2; ++i) {
    NS_ASSIGN_OR_RETURN(kinds[i], detectInput(a.inputs[i], a.inputOptions.format));
    NS_ASSIGN_OR_RETURN(sides[i], loadSide(a.inputs[i], kinds[i], a.inputOptions));
  }
  DiffOptions options;
  options.maxListed = a.maxListed;
  if (!sides[0] && !sides[1]) {
    return NS_ERROR(Code::kInvalidArgument, "two reports: diff needs a trace or a workload on one side");
  }
  for (int i = 0; i < 2; ++i) {
    if (sides[i]) continue;
    NS_ASSIGN_OR_RETURN(ReplayReportCsv report, readReportCsv(a.inputs[i]));
    DiffSide& other = *sides[1 - i];
    other = reportView(other);
    sides[i] = diffSideFromReport(report, other, a.iteration);
    options.matchById = true;
  }
  DiffResult result = compareSides(*sides[0], *sides[1], options);
  if (!a.quiet) printDiff(stdout, *sides[0], *sides[1], result, options);
  return result.same() ? 0 : 1;
}

}  // namespace

int diffMain(int argc, char** argv) {
  DiffArgs args;
  std::string error = parseArgs(argc, argv, &args);
  if (args.help) {
    std::printf("%s%s", kDiffUsage, inputOptionsHelp());
    return 0;
  }
  if (!error.empty()) {
    std::fprintf(stderr, "ncclshim diff: %s (see --help)\n", error.c_str());
    return 2;
  }
  Result<int> status = run(args);
  if (!status.ok()) {
    std::fprintf(stderr, "ncclshim diff: %s\n", status.status().message().c_str());
    return 2;
  }
  return *status;
}

}  // namespace nshim::tools
