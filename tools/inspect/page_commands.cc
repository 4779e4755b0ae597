// `ncclshim report <phynet JSON> -o page.html` and `ncclshim compare A.json B.json [more] [-o
// page.html] [--fail-below RATIO]`: the options are checked here (so --help and usage errors need
// no Python), then the page generator (tools/report/report_main.py, through
// workload/page_generator.h) reads the reports, prints the comparison and writes the pages.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/inspect/capture_figures.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/tool_input.h"
#include "workload/page_generator.h"

namespace nshim::tools {
namespace {

const char* kReportDescription =
    R"(  One self-contained HTML page (no server; nothing is fetched when it is opened) for one replay,
  from the JSON that phynet writes with --json FILE (phynet --html FILE writes the same page):
  what was replayed (input, layout, transport, hosts, NICs), the summary by op x group x size, busbw
  against message size per op and group (with the ideal line when --rate was given), replayed
  against recorded time, bytes per rank (per host and NIC when the report has them), the traffic
  matrix between ranks (and hosts) as a heat map, and a timeline per rank and communicator.
  Charts: matplotlib (Debian: apt-get install python3-matplotlib), as SVG inside the page.)";
const char* kReportFooter =
    R"(environment: NCCLSHIM_PYTHON (the Python to use), NCCLSHIM_REPORT_SCRIPT (the generator script).
exit status: 0 written, 2 bad input or usage (the message names the file), 3 no Python 3 with
matplotlib here (nothing written).)";

const char* kCompareDescription =
    R"(  The same operations of several phynet replays (JSON reports) side by side, each run against the
  first: per op x group x size the mean time and busbw of each run and the ratios run / A, the
  end-to-end time ratio per measured iteration, largest differences first. Text on stdout; with -o
  also one self-contained HTML page with charts. Runs of different workloads (other ranks, other
  operations, sizes that --scale does not explain) are refused, naming the first difference.
  Given a GPU-timed capture (an ncclshim trace) first, its replay is compared with it: per op x
  group x size the mean GPU time against the replayed time (ratio replay / capture), and per rank
  (and training iteration) the communication and exposed communication time and the overlapping
  op pairs, capture against replay (the replay's from its report: phynet --pace recorded --json;
  docs/replay_time.md). A capture without GPU time is refused: CPU call times are no durations.)";
const char* kCompareFooter =
    R"(exit status: 0 compared, 1 below --fail-below, 2 bad input, different workloads or usage, 3 -o
without a Python 3 with matplotlib here.)";

struct PageArgs {
  std::vector<std::string> inputs;
  std::string output, title, failBelow, rows;
  std::string workload;  // report --input: what was replayed
  InputOptions inputOptions;
};

CLI::Option* addText(CLI::App& app, const std::string& names, const std::string& valueName, std::string* target,
                     const std::string& description) {
  return addValueOption(
      app, names, valueName, [target](const std::string& value) { *target = value; }, description);
}

void addOptions(CLI::App& app, bool compare, PageArgs* a) {
  app.add_option("inputs", a->inputs, "the reports (and the capture)");
  if (compare) {
    addText(app, "-o,--output", "PATH", &a->output, "also write the comparison as an HTML page (needs matplotlib)");
    addValueOption(
        app, "--fail-below", "RATIO",
        [a](const std::string& value) {
          char* end = nullptr;
          if (std::strtod(value.c_str(), &end) <= 0 || *end != '\0')
            refuseValue("--fail-below: '" + value + "' is not a ratio > 0");
          a->failBelow = value;
        },
        "exit 1 when a run's busbw ratio on any row, or its end-to-end speed\n"
        "(A's time / its time), is below RATIO (e.g. 0.9: more than 10 % slower)");
    addValueOption(
        app, "--rows", "N",
        [a](const std::string& value) {
          char* end = nullptr;
          if (std::strtol(value.c_str(), &end, 10) < 0 || *end != '\0' || value.empty())
            refuseValue("--rows: '" + value + "' is not a count");
          a->rows = value;
        },
        "rows printed on stdout (default 40; the page has all)");
  } else {
    addText(app, "-o,--output", "PATH", &a->output, "the page to write (required)");
    addText(app, "--input", "PATH", &a->workload,
            "the trace / SimAI / AICB input that was replayed: its communicators' members\n"
            "split the timeline per rank (phynet --html passes them itself); with the input\n"
            "options below as phynet was given");
    addInputOptions(app, &a->inputOptions);
  }
  addText(app, "--title", "TEXT", &a->title, "page title");
  app.callback([a, compare] {
    if (a->inputs.empty())
      refuseValue(compare ? "give two or more phynet JSON reports (or a trace and its replay's)" : "no input given");
    if (!compare && a->inputs.size() > 1)
      refuseValue("more than one input ('" + a->inputs[0] + "' and '" + a->inputs[1] + "')");
    if (compare && a->inputs.size() < 2) refuseValue("give two or more phynet JSON reports to compare");
    if (!compare && a->output.empty()) refuseValue("-o PAGE.html is required");
  });
}

// The members of the communicators of report --input, in a temporary file for the generator.
Result<std::string> commsFile(const PageArgs& a) {
  NS_ASSIGN_OR_RETURN(InputKind kind, detectInput(a.workload, a.inputOptions.format));
  if (kind == InputKind::kReport) {
    return NS_ERROR(Code::kInvalidArgument, "{} is a report; give the trace or workload that was replayed", a.workload);
  }
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(a.workload, kind, a.inputOptions));
  char name[] = "/tmp/ncclshim-comms-XXXXXX.json";
  int fd = mkstemps(name, 5);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "cannot create a temporary file in /tmp");
  close(fd);
  Status written = workload::writeCommsJson(name, loaded.workload);
  if (!written.ok()) {
    unlink(name);
    return written;
  }
  return std::string(name);
}

// compare TRACE ...: the capture's own figures (capture_figures.h) in a temporary file.
Result<std::string> captureFile(const std::string& trace) {
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(trace, InputKind::kTrace, InputOptions{}));
  NS_ASSIGN_OR_RETURN(std::string name, workload::temporaryReportFile("compare"));
  Status written = writeCaptureFigures(name, trace, loaded.workload);
  if (!written.ok()) {
    unlink(name.c_str());
    return written;
  }
  return name;
}

// The page generator on the checked command line; its exit status.
Result<int> generate(const PageArgs& a, bool compare) {
  const char* name = compare ? "compare" : "report";
  // --flag=value and the inputs after "--": values and file names that start with '-' stay what they are
  std::vector<std::string> args = {name};
  if (!a.output.empty()) args.push_back("--output=" + a.output);
  if (!a.title.empty()) args.push_back("--title=" + a.title);
  if (!a.failBelow.empty()) args.push_back("--fail-below=" + a.failBelow);
  if (!a.rows.empty()) args.push_back("--rows=" + a.rows);
  args.push_back("--");
  args.insert(args.end(), a.inputs.begin(), a.inputs.end());
  const std::string who = std::string("ncclshim ") + name;
  std::string capture;  // compare TRACE REPORT: the capture's figures, for the generator's --capture
  if (compare) {
    Result<InputKind> kind = detectInput(a.inputs[0], "auto");
    if (kind.ok() && *kind == InputKind::kTrace) {
      NS_ASSIGN_OR_RETURN(capture, captureFile(a.inputs[0]));
      args.erase(std::find(args.begin(), args.end(), a.inputs[0]));
      args.insert(args.begin() + 1, {"--capture=" + capture, "--capture-source=" + a.inputs[0]});
    }
  }
  std::string comms;
  if (!a.workload.empty()) {
    Result<std::string> written = commsFile(a);
    if (!written.ok()) {
      if (!capture.empty()) unlink(capture.c_str());
      return Status(written.status().code(), "--input: " + written.status().message());
    }
    comms = *written;
    args.insert(args.begin() + 1, {"--comms=" + comms, "--comms-source=" + a.workload});
  }
  int rc = workload::runPageGenerator(args, !a.output.empty(), who.c_str());
  if (!comms.empty()) unlink(comms.c_str());
  if (!capture.empty()) unlink(capture.c_str());
  return rc;
}

int pageMain(int argc, char** argv, bool compare) {
  PageArgs args;
  CLI::App app("", compare ? "ncclshim compare" : "ncclshim report");
  if (compare) {
    describeCommand(
        app,
        "A.json B.json [C.json ...] [-o PAGE.html] [options]\n       ncclshim compare TRACE REPLAY.json [-o PAGE.html]",
        kCompareDescription, kCompareFooter);
  } else {
    describeCommand(app, "<phynet JSON report> -o PAGE.html [--title TEXT]", kReportDescription, kReportFooter);
  }
  addOptions(app, compare, &args);
  return runCommand(app, argc, argv, [&args, compare] { return generate(args, compare); });
}

}  // namespace

int reportMain(int argc, char** argv) { return pageMain(argc, argv, false); }
int compareMain(int argc, char** argv) { return pageMain(argc, argv, true); }

}  // namespace nshim::tools
