// `ncclshim plot <input> -o out.png [--kind sizes|busbw|replay]`: prepares the data (the size
// distribution of a trace / workload, or a checked phynet report CSV) and runs the Python plotter
// (tools/plot/ncclshim_plot.py) with the first Python 3 that has matplotlib. Without one it writes
// nothing, says so, and exits 3, so that machines without matplotlib (the GPU machine) only skip
// plotting.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/settings.h"
#include "common/subprocess.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/distribution.h"
#include "tools/inspect/distribution_output.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/output_file.h"
#include "tools/inspect/report_reader.h"
#include "tools/inspect/tool_input.h"

namespace nshim::tools {
namespace {

const char* kPlotDescription = R"(  PNG charts (Python 3 + matplotlib; Debian: apt-get install python3-matplotlib):
  sizes    message-size histogram by op and group: calls and bytes per power-of-two size bucket
           (input: a trace, SimAI .txt or AICB .csv; the default for them)
  busbw    bus bandwidth vs message size per op and group (input: a phynet report CSV; the
           default for it)
  replay   replayed vs recorded time per op (input: a phynet report CSV of a trace replay))";

constexpr int kNoPlotter = 3;

struct PlotArgs {
  std::string input;
  std::string output;
  std::string kind;
  std::string title;
  InputOptions inputOptions;
};

void addOptions(CLI::App& app, PlotArgs* a) {
  app.add_option("input", a->input, "the trace, workload or report");
  addValueOption(
      app, "-o,--output", "PATH", [a](const std::string& value) { a->output = value; }, "the PNG to write (required)");
  addValueOption(
      app, "--kind", "KIND",
      [a](const std::string& value) {
        if (value != "sizes" && value != "busbw" && value != "replay") {
          refuseValue(fmt::format("--kind: '{}' is not sizes, busbw or replay", value));
        }
        a->kind = value;
      },
      "sizes, busbw or replay");
  addValueOption(
      app, "--title", "TEXT", [a](const std::string& value) { a->title = value; }, "chart title");
  addInputOptions(app, &a->inputOptions);
  app.callback([a] {
    if (a->input.empty()) refuseValue("no input given");
    if (a->output.empty()) refuseValue("-o OUT.png is required");
  });
}

std::string findScript() {
  if (settingIsSet(Setting::NCCLSHIM_PLOT_SCRIPT)) return settingString(Setting::NCCLSHIM_PLOT_SCRIPT);
  const std::string dir = executableDir();
  for (const std::string& candidate : {dir + "/ncclshim_plot.py", dir + "/../tools/plot/ncclshim_plot.py"}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

// Writes the size distribution of a trace / workload to a temporary CSV; returns its path.
Result<std::string> sizesCsv(const PlotArgs& a, InputKind kind) {
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(a.input, kind, a.inputOptions));
  char name[] = "/tmp/ncclshim-plot-XXXXXX.csv";
  int fd = mkstemps(name, 4);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "cannot create a temporary file in /tmp");
  close(fd);
  NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(name));
  printWorkloadCsv(out.get(), distributionOf(loaded.workload), SummaryTable::kDistribution);
  NS_RETURN_IF_ERROR(out.close());
  return std::string(name);
}

Result<int> run(PlotArgs a) {
  NS_ASSIGN_OR_RETURN(InputKind kind, detectInput(a.input, a.inputOptions.format));
  if (a.kind.empty()) a.kind = kind == InputKind::kReport ? "busbw" : "sizes";
  if ((a.kind == "sizes") == (kind == InputKind::kReport)) {
    return NS_ERROR(Code::kInvalidArgument, "--kind {} needs {}, and {} is a {}", a.kind,
                    a.kind == "sizes" ? "a trace or workload" : "a phynet report CSV", a.input, inputKindName(kind));
  }
  const std::string script = findScript();
  if (script.empty()) {
    return NS_ERROR(Code::kInvalidArgument,
                    "ncclshim_plot.py not found next to the binary nor in ../tools/plot "
                    "(set NCCLSHIM_PLOT_SCRIPT)");
  }
  std::string data = a.input, temporary;
  if (kind == InputKind::kReport) {
    NS_ASSIGN_OR_RETURN(ReplayReportCsv report, readReportCsv(a.input));  // checked before plotting
    if (report.rows.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: the report has no rows", a.input);
    bool recorded = false;
    for (const ReportRow& r : report.rows) recorded = recorded || r.recordedUs >= 0;
    if (a.kind == "replay" && !recorded) {
      return NS_ERROR(Code::kInvalidArgument, "{}: no row has a recorded time (replay a trace to get them)", a.input);
    }
  } else {
    NS_ASSIGN_OR_RETURN(temporary, sizesCsv(a, kind));
    data = temporary;
  }
  const std::string python = findPython("matplotlib");
  int rc = kNoPlotter;
  if (python.empty()) {
    std::fprintf(stderr,
                 "ncclshim plot: skipped: no Python 3 with matplotlib here (Debian: apt-get install "
                 "python3-matplotlib, or set NCCLSHIM_PYTHON); no PNG written\n");
  } else {
    std::vector<std::string> argv = {python, script, a.kind, data, "-o", a.output};
    if (!a.title.empty()) argv.insert(argv.end(), {"--title", a.title});
    rc = runProgram(argv, false);
    if (rc == 0) std::fprintf(stderr, "ncclshim plot: wrote %s (%s)\n", a.output.c_str(), a.kind.c_str());
    else if (rc != kNoPlotter) rc = 2;
  }
  if (!temporary.empty()) unlink(temporary.c_str());
  return rc;
}

}  // namespace

int plotMain(int argc, char** argv) {
  PlotArgs args;
  CLI::App app("", "ncclshim plot");
  describeCommand(app, "<input> -o OUT.png [--kind KIND] [options]", kPlotDescription,
                  "environment: NCCLSHIM_PYTHON (the Python to use), NCCLSHIM_PLOT_SCRIPT (the plotter script).\n"
                  "exit status: 0 written, 2 error, 3 no Python 3 with matplotlib here (nothing written).");
  addOptions(app, &args);
  return runCommand(app, argc, argv, [&args] { return run(args); });
}

}  // namespace nshim::tools
