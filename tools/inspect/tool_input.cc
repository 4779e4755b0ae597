// Input detection and loading through phynet's loaders.
#include "tools/inspect/tool_input.h"

#include <sys/stat.h>

#include <fstream>

#include "tools/inspect/report_reader.h"
#include "workload/aicb_workload.h"
#include "workload/chakra_workload.h"
#include "workload/input_format.h"
#include "workload/pytorch_et_workload.h"
#include "workload/rank_layout.h"
#include "workload/simai_workload.h"
#include "workload/trace_workload.h"
#include "workload/workload_options.h"

namespace nshim::tools {
namespace {

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

// What a SimAI / AICB reader left out (rows that move no data), said in one note as phynet says it.
void noteSkippedRows(LoadedWorkload* loaded) {
  if (loaded->workload.skipped.empty()) return;
  loaded->notes.push_back("rows that move no data are left out: " + workload::skippedText(loaded->workload.skipped));
}

}  // namespace

const char* inputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kTrace: return "trace";
    case InputKind::kSimAi: return "simai";
    case InputKind::kAicb: return "aicb";
    case InputKind::kReport: return "report";
    case InputKind::kChakra: return "chakra";
    case InputKind::kPyTorchEt: return "pytorch-et";
  }
  return "unknown";
}

bool parseCount(std::string_view text, int64_t* out) {
  int64_t value = 0;
  if (!workload::parseInt(text, &value) || value < 0) return false;
  *out = value;
  return true;
}

Result<InputKind> detectInput(const std::string& path, const std::string& format) {
  if (format == "report") return InputKind::kReport;
  workload::InputFormat chosen = workload::InputFormat::kAuto;
  workload::parseInputFormat(format, &chosen);
  if (chosen == workload::InputFormat::kAuto) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        firstContentLine(path).rfind(kReportCsvHeaderStart, 0) == 0) {
      return InputKind::kReport;
    }
    NS_ASSIGN_OR_RETURN(chosen, workload::detectInputFormat(path));
  }
  switch (chosen) {
    case workload::InputFormat::kSimAi: return InputKind::kSimAi;
    case workload::InputFormat::kAicb: return InputKind::kAicb;
    case workload::InputFormat::kChakra: return InputKind::kChakra;
    case workload::InputFormat::kPyTorchEt: return InputKind::kPyTorchEt;
    default: return InputKind::kTrace;
  }
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
      noteSkippedRows(&loaded);
      return loaded;
    }
    case InputKind::kAicb: {
      NS_ASSIGN_OR_RETURN(loaded.workload, workload::loadAicbWorkload(path, layout));
      noteSkippedRows(&loaded);
      return loaded;
    }
    case InputKind::kChakra: {
      workload::ChakraOptions chakra;
      chakra.commGroupFile = options.commGroupFile;
      NS_ASSIGN_OR_RETURN(loaded.workload, workload::loadChakraWorkload(path, chakra));
      return loaded;
    }
    case InputKind::kPyTorchEt: {
      NS_ASSIGN_OR_RETURN(loaded.workload, workload::loadPyTorchEtWorkload(path, workload::PyTorchEtOptions{}));
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
