// What the trace tools read, and how: an ncclshim trace (a directory of per-rank .jsonl files or one
// file), a SimAI workload text, an AICB CSV, a Chakra execution trace, PyTorch execution traces, or
// phynet's per-op report CSV. The kind is taken from --from or told by content as phynet tells it
// (workload/input_format.h), a CSV whose header is phynet's report being a report. Traces and workloads load through phynet's own loaders, so every tool sees
// exactly the per-rank operations (and communicator labels) that phynet would replay.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tools/inspect/decision_mix.h"
#include "workload/workload.h"
#include "workload/workload_options.h"

namespace nshim::tools {

enum class InputKind { kTrace, kSimAi, kAicb, kReport, kChakra, kPyTorchEt };
// "trace", "simai", "aicb", "report", "chakra", "pytorch-et"
const char* inputKindName(InputKind kind);

// Set by the input options every command takes (input_command_line.h).
struct InputOptions {
  std::string format = "auto";  // auto | trace | simai | aicb | report | chakra | pytorch-et
  std::string commGroupFile;    // Chakra: --comm-group, as phynet's
  int worldSize = 0;            // SimAI / AICB layout overrides (0: from the file), as phynet's options
  int tp = 0;
  int ep = 0;
  int pp = 0;
  workload::SimAiRules simaiRules;  // --simai-rules, as phynet's
};

Result<InputKind> detectInput(const std::string& path, const std::string& format);

struct LoadedWorkload {
  workload::Workload workload;
  InputKind kind = InputKind::kTrace;
  std::vector<std::string> notes;  // cut files, dropped records, failed calls, rows that move no data
  bool opsStreamed = false;        // the ops went to the sink (SimAI / AICB); the workload holds none
  DecisionMix decisions;           // traces: NCCL's decisions (profiler plugin lines), from the same read
};

// A trace, SimAI, AICB, Chakra or PyTorch ET input as phynet's Workload (an error for a report).
// opSink set: SimAI / AICB ops are handed to it as they are expanded and not kept (a trace is read
// as usual: its ops are in the workload and opsStreamed is false).
Result<LoadedWorkload> loadWorkloadInput(
    const std::string& path, InputKind kind, const InputOptions& options,
    std::function<void(int rank, const workload::WorkOp& op, const workload::CommGroup& comm)> opSink = {});

// A non-negative decimal integer option value; false when it is not one.
bool parseCount(std::string_view text, int64_t* out);

}  // namespace nshim::tools
