// Input detection and loading through phynet's loaders.
#include "tools/inspect/tool_input.h"

#include <sys/stat.h>

#include <fstream>

#include "workload/aicb_workload.h"
#include "workload/rank_layout.h"
#include "workload/simai_workload.h"
#include "workload/trace_workload.h"
#include "workload/workload_options.h"
#include "tools/inspect/report_reader.h"

namespace nshim::tools {
namespace {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The first line that is not blank and not an AICB "[rank0 ~ rank7]" banner.
std::string firstContentLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!workload::isBlank(line) && line[line.find_first_not_of(" \t")] != '[') return line;
  }
  return "";
}

}  // namespace

const char* inputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kTrace: return "trace";
    case InputKind::kSimAi: return "simai";
    case InputKind::kAicb: return "aicb";
    case InputKind::kReport: return "report";
  }
  return "unknown";
}

const char* inputOptionsHelp() {
  return R"(input options:
  --from KIND       the input's format: auto (default), trace, simai, aicb, report
  --world-size N    SimAI / AICB: ranks in the job (default: from the file)
  --tp N, --ep N, --pp N
                    SimAI / AICB: layout sizes (default: from the file), as phynet's options
  --simai-rules LIST
                    SimAI's own semantics to follow (default all; none, or a list of min-fwd-4096,
                    pp-per-microbatch, micro-first-layer), as phynet's option
)";
}

bool parseCount(std::string_view text, int64_t* out) {
  int64_t value = 0;
  if (!workload::parseInt(text, &value) || value < 0) return false;
  *out = value;
  return true;
}

bool takeInputOption(std::string_view flag, std::string_view value, InputOptions* options, std::string* error) {
  if (flag == "--from") {
    if (value != "auto" && value != "trace" && value != "simai" && value != "aicb" && value != "report") {
      *error = fmt::format("--from: '{}' is not auto, trace, simai, aicb or report", value);
    }
    options->format = std::string(value);
    return true;
  }
  if (flag == "--simai-rules") {
    std::string problem;
    if (!workload::parseSimAiRules(value, &options->simaiRules, &problem)) *error = "--simai-rules: " + problem;
    return true;
  }
  int* target = flag == "--world-size" ? &options->worldSize
                : flag == "--tp"       ? &options->tp
                : flag == "--ep"       ? &options->ep
                : flag == "--pp"       ? &options->pp
                                       : nullptr;
  if (!target) return false;
  int64_t number = 0;
  if (!parseCount(value, &number) || number < 1 || number > (1 << 24)) {
    *error = fmt::format("{}: '{}' is not a positive integer", flag, value);
  }
  *target = static_cast<int>(number);
  return true;
}

Result<InputKind> detectInput(const std::string& path, const std::string& format) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NS_ERROR(Code::kInvalidArgument, "{}: no such file or directory", path);
  if (format == "trace") return InputKind::kTrace;
  if (format == "simai") return InputKind::kSimAi;
  if (format == "aicb") return InputKind::kAicb;
  if (format == "report") return InputKind::kReport;
  if (S_ISDIR(st.st_mode) || endsWith(path, ".jsonl")) return InputKind::kTrace;
  if (endsWith(path, ".txt")) return InputKind::kSimAi;
  std::string first = firstContentLine(path);
  if (first.rfind(kReportCsvHeaderStart, 0) == 0) return InputKind::kReport;
  if (endsWith(path, ".csv") || first.find("comm_type") != std::string::npos) return InputKind::kAicb;
  if (!first.empty() && first[0] == '{') return InputKind::kTrace;
  return NS_ERROR(Code::kInvalidArgument, "{}: cannot tell the format (not a trace, .txt or .csv): give --from",
                  path);
}

Result<LoadedWorkload> loadWorkloadInput(
    const std::string& path, InputKind kind, const InputOptions& options,
    std::function<void(int rank, const workload::WorkOp& op, const workload::CommGroup& comm)> opSink) {
  LoadedWorkload loaded;
  loaded.kind = kind;
  loaded.opsStreamed = opSink && (kind == InputKind::kSimAi || kind == InputKind::kAicb);
  workload::WorkloadOptions layout;
  layout.worldSize = options.worldSize;
  layout.tp = options.tp;
  layout.ep = options.ep;
  layout.pp = options.pp;
  layout.simai = options.simaiRules;
  layout.opSink = std::move(opSink);
  switch (kind) {
    case InputKind::kSimAi: {
      NS_ASSIGN_OR_RETURN(loaded.workload, workload::loadSimAiWorkload(path, layout));
      return loaded;
    }
    case InputKind::kAicb: {
      NS_ASSIGN_OR_RETURN(loaded.workload, workload::loadAicbWorkload(path, layout));
      return loaded;
    }
    case InputKind::kReport:
      return NS_ERROR(Code::kInvalidArgument, "{}: a phynet report holds no per-rank operations here", path);
    case InputKind::kTrace: break;
  }
  workload::TraceLoadStats stats;
  NS_ASSIGN_OR_RETURN(trace::TraceSet set, trace::readTracePath(path));
  loaded.decisions = decisionMixOfSet(set);  // before the conversion consumes the op records
  NS_ASSIGN_OR_RETURN(loaded.workload, workload::workloadFromTraceSet(std::move(set), &stats));
  loaded.workload.description = fmt::format("{} ({})", loaded.workload.description, path);
  if (stats.cutFiles) loaded.notes.push_back(fmt::format("{} file(s) cut by a killed process", stats.cutFiles));
  if (stats.droppedRecords) {
    loaded.notes.push_back(fmt::format("the recorder lost {} record(s)", stats.droppedRecords));
  }
  if (stats.skippedFailedCalls) {
    loaded.notes.push_back(fmt::format("{} call(s) that failed when recorded are left out", stats.skippedFailedCalls));
  }
  return loaded;
}

}  // namespace nshim::tools
