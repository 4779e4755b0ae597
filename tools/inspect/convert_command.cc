// `ncclshim convert <input> --to simai|aicb|chakra|chrome|csv -o OUT`: a trace (or a SimAI / AICB /
// Chakra / PyTorch ET workload, for simai, aicb and chakra) written in another format.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "workload/chakra_export.h"

#include "common/command_line.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/layout_infer.h"
#include "tools/inspect/output_file.h"
#include "tools/inspect/tool_input.h"
#include "tools/inspect/trace_export.h"
#include "tools/inspect/workload_writers.h"

namespace nshim::tools {
namespace {

const char* kConvertDescription = R"(  Writes <input> in another format (OUT "-" or none: stdout):
  simai    SimAI workload text. Every communicator must be a TP, DP, EP or DP_EP group of one
           TP x DP layout and every rank must issue the same sequence of collectives (allreduce,
           allgather, reducescatter, alltoall, broadcast from rank 0); otherwise an error names the
           communicator or op. Ops on one-rank communicators are left out; count and datatype are
           re-derived from bytes by phynet. `phynet OUT` replays the same per-rank ops.
  aicb     AICB CSV, same rules; also EP_TP, PP and world groups, reduce, any broadcast root.
  chakra   Chakra execution traces for ASTRA-sim: OUT.<rank>.et per rank and comm_group.json
           beside them (OUT a directory: OUT/ncclshim.<rank>.et). Compute gaps become COMP_NODEs;
           each op a COMM_COLL / SEND / RECV node depending on the compute before it and on the
           previous op of its communicator (docs/foreign_formats.md). Needs -o.
  chrome   Chrome trace JSON for Perfetto: pid = global rank, tid = communicator, every op an
           event with all its fields as args (trace input only).
  csv      one CSV row per op record (trace input only).
  Input: a trace (directory or .jsonl); for simai / aicb / chakra also a SimAI .txt, an AICB .csv,
  a Chakra trace or PyTorch execution traces.)";

struct ConvertArgs {
  std::string input;
  std::string to;
  std::string output = "-";
  InputOptions inputOptions;
};

void addOptions(CLI::App& app, ConvertArgs* a) {
  app.add_option("input", a->input, "the trace or workload");
  addValueOption(
      app, "--to", "FORMAT",
      [a](const std::string& value) {
        if (value != "simai" && value != "aicb" && value != "chakra" && value != "chrome" && value != "csv") {
          refuseValue(fmt::format("--to: '{}' is not simai, aicb, chakra, chrome or csv", value));
        }
        a->to = value;
      },
      "simai, aicb, chakra, chrome or csv (required)");
  addValueOption(
      app, "-o,--output", "PATH", [a](const std::string& value) { a->output = value; }, "output file (default stdout)");
  addInputOptions(app, &a->inputOptions);  // --tp, --ep, --pp also fix the layout of simai / aicb output
  app.callback([a] {
    if (a->input.empty()) refuseValue("no input given");
    if (a->to.empty()) refuseValue("--to is required");
  });
}

void note(const std::string& text) { std::fprintf(stderr, "ncclshim convert: note: %s\n", text.c_str()); }

Status convertTrace(const ConvertArgs& a) {
  NS_ASSIGN_OR_RETURN(TraceView view, readTraceView(a.input));
  for (const std::string& n : view.notes) note(n);
  NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(a.output));
  size_t written = a.to == "chrome" ? writeChromeTrace(out.get(), view) : writeOpCsv(out.get(), view);
  NS_RETURN_IF_ERROR(out.close());
  std::fprintf(stderr, "ncclshim convert: %zu op records of %d ranks -> %s (%s)\n", written, view.worldSize,
               out.path().c_str(), a.to.c_str());
  return Status::Ok();
}

Status convertWorkload(const ConvertArgs& a, InputKind kind) {
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(a.input, kind, a.inputOptions));
  for (const std::string& n : loaded.notes) note(n);
  LayoutTarget target = a.to == "simai" ? simAiTarget() : aicbTarget();
  target.tp = a.inputOptions.tp;
  target.ep = a.inputOptions.ep;
  target.pp = a.inputOptions.pp;
  NS_ASSIGN_OR_RETURN(InferredJob job, inferJob(loaded.workload, target));
  for (const std::string& n : job.notes) note(n);
  NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(a.output));
  if (a.to == "simai") writeSimAi(out.get(), job);
  else writeAicb(out.get(), job);
  NS_RETURN_IF_ERROR(out.close());
  std::fprintf(stderr, "ncclshim convert: %zu ops per rank, %d ranks -> %s (%s)\n", job.ops.size(), job.layout.world,
               out.path().c_str(), a.to.c_str());
  return Status::Ok();
}

// Writes `bytes` to `path` (created or truncated), checking every write.
Status writeWhole(const std::string& path, const std::string& bytes) {
  NS_ASSIGN_OR_RETURN(OutputFile out, OutputFile::open(path));
  std::fwrite(bytes.data(), 1, bytes.size(), out.get());
  return out.close();
}

Status convertToChakra(const ConvertArgs& a, InputKind kind) {
  NS_ASSIGN_OR_RETURN(LoadedWorkload loaded, loadWorkloadInput(a.input, kind, a.inputOptions));
  for (const std::string& n : loaded.notes) note(n);
  NS_ASSIGN_OR_RETURN(workload::ChakraExport exported, workload::exportChakra(loaded.workload));
  struct stat st {};
  const bool intoDirectory = a.output.back() == '/' || (::stat(a.output.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  if (intoDirectory && ::mkdir(a.output.c_str(), 0777) != 0 && errno != EEXIST) {
    return NS_ERROR(Code::kSystemError, "{}: cannot create the directory: {}", a.output, std::strerror(errno));
  }
  std::string prefix = intoDirectory ? a.output + (a.output.back() == '/' ? "" : "/") + "ncclshim" : a.output;
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  for (size_t r = 0; r < exported.rankFiles.size(); ++r) {
    NS_RETURN_IF_ERROR(writeWhole(fmt::format("{}.{}.et", prefix, r), exported.rankFiles[r]));
  }
  NS_RETURN_IF_ERROR(writeWhole(dir + "/comm_group.json", exported.commGroupJson));
  std::fprintf(stderr,
               "ncclshim convert: %zu ranks, %zu nodes (%zu communication, %zu collectives of one rank as "
               "compute) -> %s.<rank>.et and %s/comm_group.json (chakra)\n",
               exported.rankFiles.size(), exported.nodes, exported.commNodes, exported.oneRankOps, prefix.c_str(),
               dir.c_str());
  return Status::Ok();
}

Status run(const ConvertArgs& a) {
  NS_ASSIGN_OR_RETURN(InputKind kind, detectInput(a.input, a.inputOptions.format));
  if (kind == InputKind::kReport) {
    return NS_ERROR(Code::kInvalidArgument, "{}: a phynet report cannot be converted (give the trace)", a.input);
  }
  if (a.to == "chrome" || a.to == "csv") {
    if (kind != InputKind::kTrace) {
      return NS_ERROR(Code::kInvalidArgument, "{}: --to {} needs an ncclshim trace, not a {} workload", a.input, a.to,
                      inputKindName(kind));
    }
    return convertTrace(a);
  }
  if (a.to == "chakra") return convertToChakra(a, kind);
  return convertWorkload(a, kind);
}

}  // namespace

int convertMain(int argc, char** argv) {
  ConvertArgs args;
  CLI::App app("", "ncclshim convert");
  describeCommand(app, "<input> --to FORMAT [-o OUT] [options]", kConvertDescription,
                  "--tp N, --ep N, --pp N also fix the layout sizes of simai / aicb output (default: searched).");
  addOptions(app, &args);
  return runCommand(app, argc, argv, exitZeroWhenOk([&args] { return run(args); }));
}

}  // namespace nshim::tools
