// `ncclshim diff <a> <b>`: two traces (or workloads, or a trace and a phynet report) compared op by
// op per rank and communicator; prints the first divergence; exit 0 same, 1 different, 2 error.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/diff_view.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/tool_input.h"
#include "tools/inspect/trace_diff.h"

namespace nshim::tools {
namespace {

const char* kDiffDescription =
    R"(  Compares two inputs op by op, per rank and per communicator, and names the first divergence
  (rank, communicator, seq, field, both values). Inputs: ncclshim traces (directory or .jsonl), SimAI
  .txt or AICB .csv workloads, or one phynet report .csv (compared with the other input as phynet
  replayed it: collectives once per communicator, sends as sendrecv; fields op, count, dtype, peer,
  nranks, bytes). Communicators are matched by members and creation order (by id with a report).
  Exit status: 0 same, 1 different, 2 error.)";

struct DiffArgs {
  std::vector<std::string> inputs;
  size_t maxListed = 10;
  int iteration = 0;
  bool quiet = false;
  InputOptions inputOptions;
};

void addOptions(CLI::App& app, DiffArgs* a) {
  app.add_option("inputs", a->inputs, "the two inputs")->expected(0, 2);
  for (const char* name : {"--max", "--iteration"}) {
    const std::string flag = name;
    addValueOption(
        app, flag, "N",
        [a, flag](const std::string& value) {
          int64_t number = 0;
          if (!parseCount(value, &number)) refuseValue(fmt::format("{}: '{}' is not a count", flag, value));
          if (flag == "--max") a->maxListed = static_cast<size_t>(std::max<int64_t>(number, 1));
          else a->iteration = static_cast<int>(number);
        },
        flag == "--max" ? "divergences listed (default 10)" : "the report's measured iteration to compare (default 0)");
  }
  app.add_flag("-q,--quiet", a->quiet, "print nothing, only the exit status");
  addInputOptions(app, &a->inputOptions);
  app.callback([a] {
    if (a->inputs.size() != 2) refuseValue("two inputs are needed");
  });
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
  CLI::App app("", "ncclshim diff");
  describeCommand(app, "<a> <b> [options]", kDiffDescription);
  addOptions(app, &args);
  return runCommand(app, argc, argv, [&args] { return run(args); });
}

}  // namespace nshim::tools
