// `ncclshim summary`: the communication distribution of a trace or workload, or the time and bus
// bandwidth distribution of a phynet report, as a text table, CSV or JSON.
#include <cstdio>
#include <cstring>
#include <string>

#include "common/command_line.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/decision_mix.h"
#include "tools/inspect/distribution.h"
#include "tools/inspect/distribution_output.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/iteration_lines.h"
#include "tools/inspect/job_shape_lines.h"
#include "tools/inspect/output_file.h"
#include "tools/inspect/report_reader.h"
#include "tools/inspect/tool_input.h"

namespace nshim::tools {
namespace {

const char* kSummaryDescription =
    R"(  The communication distribution of <input>: an ncclshim trace (directory or .jsonl file), a SimAI
  workload .txt, an AICB .csv, or a phynet report .csv (--report FILE of phynet).
  Trace / workload: calls and bytes by op x group x message-size bucket (powers of two), per
  communicator and per rank, with the payload bytes each rank sends under ring algorithms.
  A trace recorded with the profiler plugin (format version 2) adds NCCL's decisions: per op and
  size bucket, the calls run with each algorithm / protocol, their channels and network bytes sent.
  Report: replayed time, algbw and busbw by op x group x message-size bucket.)";

struct SummaryArgs {
  std::string input;
  std::string output = "-";
  std::string format = "text";
  SummaryTable table = SummaryTable::kDistribution;
  InputOptions inputOptions;
};

void addOptions(CLI::App& app, SummaryArgs* a) {
  app.add_option("input", a->input, "the trace, workload or report");
  addValueOption(
      app, "--format", "text|csv|json",
      [a](const std::string& value) {
        if (value != "text" && value != "csv" && value != "json") {
          refuseValue(fmt::format("--format: '{}' is not text, csv or json", value));
        }
        a->format = value;
      },
      "output format (default text); --csv and --json are shorthands");
  app.add_flag_callback(
      "--csv", [a] { a->format = "csv"; }, "--format csv");
  app.add_flag_callback(
      "--json", [a] { a->format = "json"; }, "--format json");
  addValueOption(
      app, "--table", "dist|comms|ranks|decisions",
      [a](const std::string& value) {
        if (value == "dist" || value == "distribution") a->table = SummaryTable::kDistribution;
        else if (value == "comms") a->table = SummaryTable::kComms;
        else if (value == "ranks") a->table = SummaryTable::kRanks;
        else if (value == "decisions") a->table = SummaryTable::kDecisions;
        else refuseValue(fmt::format("--table: '{}' is not dist, comms, ranks or decisions", value));
      },
      "the table CSV carries for a trace / workload (default dist;\n"
      "decisions: NCCL's algorithm / protocol mix, traces only)");
  addValueOption(
      app, "-o,--output", "PATH", [a](const std::string& value) { a->output = value; },
      "write to PATH instead of stdout");
  addInputOptions(app, &a->inputOptions);
  app.callback([a] {
    if (a->input.empty()) refuseValue("no input given");
  });
}

Status run(const SummaryArgs& a) {
  NS_ASSIGN_OR_RETURN(InputKind kind, detectInput(a.input, a.inputOptions.format));
  if (kind == InputKind::kReport) {
    NS_ASSIGN_OR_RETURN(ReplayReportCsv report, readReportCsv(a.input));
    ReportDistribution d = distributionOfReport(report);
    NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(a.output));
    if (a.format == "csv") printReportCsv(out.get(), d);
    else if (a.format == "json") printReportJson(out.get(), a.input, d);
    else printReportText(out.get(), a.input, d);
    return out.close();
  }
  if (a.table == SummaryTable::kDecisions && (kind != InputKind::kTrace || a.format != "csv")) {
    return NS_ERROR(Code::kInvalidArgument, "--table decisions: CSV of a trace only");
  }
  if (a.table == SummaryTable::kDecisions) {
    NS_ASSIGN_OR_RETURN(DecisionMix mix, decisionMixOfTrace(a.input));
    NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(a.output));
    printDecisionMixCsv(out.get(), mix);
    return out.close();
  }
  // SimAI / AICB ops are counted as they are expanded, never held (a 9216-rank file has tens of
  // millions); a trace's are read as usual.
  DistributionCounter counter;
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded,
                      loadWorkloadInput(a.input, kind, a.inputOptions,
                                        [&counter](int rank, const workload::WorkOp& op,
                                                   const workload::CommGroup& comm) { counter.add(rank, op, comm); }));
  for (const std::string& note : loaded.notes) std::fprintf(stderr, "ncclshim summary: note: %s\n", note.c_str());
  WorkloadDistribution d = loaded.opsStreamed ? counter.finish(loaded.workload) : distributionOf(loaded.workload);
  if (kind == InputKind::kTrace) {
    d.shapeLines = jobShapeLines(a.input, d);
    if (!loaded.opsStreamed) {
      for (std::string& line : iterationLines(loaded.workload)) d.shapeLines.push_back(std::move(line));
    }
  }
  NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(a.output));
  if (a.format == "csv") printWorkloadCsv(out.get(), d, a.table);
  else if (a.format == "json") printWorkloadJson(out.get(), a.input, inputKindName(kind), d);
  else printWorkloadText(out.get(), a.input, d);
  if (a.format == "text" && loaded.decisions.tasks > 0) printDecisionMixText(out.get(), loaded.decisions);
  return out.close();
}

}  // namespace

int summaryMain(int argc, char** argv) {
  SummaryArgs args;
  CLI::App app("", "ncclshim summary");
  describeCommand(app, "<input> [options]", kSummaryDescription);
  addOptions(app, &args);
  return runCommand(app, argc, argv, exitZeroWhenOk([&args] { return run(args); }));
}

}  // namespace nshim::tools
