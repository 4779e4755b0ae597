// phynet's command line: the command (usage, description, examples) around its options
// (replay_command_line.h), the checks across options, and the helpers of replay_options.h.
#include "phynet/replay_options.h"

#include <cctype>

#include "common/command_line.h"
#include "phynet/replay_command_line.h"

namespace nshim::phynet {

std::string canonicalOpFilter(const std::string& word) {
  std::string w;
  for (char c : word) {
    if (c != '_' && c != '-') w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* name :
       {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "gather", "scatter"}) {
    if (w == name) return name;
  }
  if (w == "sendrecv" || w == "p2p" || w == "send" || w == "recv") return "sendrecv";
  return "";
}

namespace {

const char* kDescription =
    "Replays the communication of a training job (an ncclshim trace, a SimAI / AICB workload expanded\n"
    "over the TP/EP/DP/PP layout, a Chakra execution trace or PyTorch execution traces) as real network\n"
    "traffic, with NCCL's ordering: one executor per communicator, per-rank issue order kept,\n"
    "communicators concurrent. MPI is used only to launch, bootstrap and gather the report; data goes\n"
    "over the chosen transport.";

const char* kExamples = R"(examples:
  mpirun -np 2 phynet examples/traces/megatron_tp2                  a captured trace
  mpirun -np 8 phynet examples/workloads/simai_tp2_dp4_ep2.txt      SimAI (or AICB .csv)
  mpirun -np 8 phynet --verify --iterations 5 --warmup 1 --report ops.csv workload.txt
  mpirun -np 8 phynet --resize dp=4 tests/data/scale/megatron_tp2_dp2_distopt
  phynet --jobs jobs.toml                                           several jobs on one fabric
how it replays, SimAI / AICB rules, memory: docs/replay.md; settings: ncclshim env.)";

// The command with every option storing into *o; the checks across options run after the parse.
void buildCommand(CLI::App& app, ReplayOptions* o) {
  describeCommand(app, "[options] <trace dir | SimAI .txt | AICB .csv | Chakra ET | PyTorch ET>", kDescription,
                  kExamples);
  addReplayOptions(app, o);
  app.callback([&app, o] {
    if (!o->jobsPath.empty()) {
      for (const CLI::Option* given : app.get_options([](const CLI::Option* opt) { return opt->count() > 0; })) {
        const std::string name = given->get_name();
        if (name == "--jobs" || name == "--out") continue;
        refuseValue(
            fmt::format("--jobs takes only --out DIR beside it, not '{}'", given->get_positional() ? o->input : name));
      }
      return;
    }
    if (o->input.empty()) {
      refuseValue(
          "no input: give a trace directory, a SimAI .txt, an AICB .csv, a Chakra trace or PyTorch execution traces");
    }
  });
}

}  // namespace

Result<ReplayOptions> parseReplayOptions(int argc, char** argv) {
  ReplayOptions o;
  CLI::App app("", "mpirun -np N phynet");
  buildCommand(app, &o);
  NS_ASSIGN_OR_RETURN(Parsed parsed, parseCommandLine(app, argc - 1, argv + 1));
  o.help = parsed == Parsed::kHelp;
  return o;
}

Result<InputFormat> resolveFormat(const ReplayOptions& options) {
  if (options.format != InputFormat::kAuto) return options.format;
  return detectInputFormat(options.input);
}

std::string replayUsage() {
  ReplayOptions unused;
  CLI::App app("", "mpirun -np N phynet");
  buildCommand(app, &unused);
  return commandHelp(app);
}

}  // namespace nshim::phynet
