// phynet's command line: the command (usage, description, examples) around its options
// (replay_command_line.h), the checks across options, and the helpers of replay_options.h.
#include "phynet/replay_options.h"

#include <cctype>

#include "common/command_line.h"
#include "phynet/replay_command_line.h"

namespace nshim::phynet {
namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(start, comma - start);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!word.empty()) out.push_back(word);
    start = comma + 1;
  }
  return out;
}

Status parseNumber(const std::string& name, const std::string& text, double low, double high, double* out) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= low && value <= high)) {
    return Status(Code::kInvalidArgument, fmt::format("{}: '{}' is not a number in [{}, {}]", name, text, low, high));
  }
  *out = value;
  return Status::Ok();
}

Status parseInt(const std::string& name, const std::string& text, int low, int high, int* out) {
  double value = 0;
  NS_RETURN_IF_ERROR(parseNumber(name, text, low, high, &value));
  if (value != static_cast<double>(static_cast<int>(value))) {
    return Status(Code::kInvalidArgument, fmt::format("{}: '{}' is not an integer", name, text));
  }
  *out = static_cast<int>(value);
  return Status::Ok();
}

// RANK[,RANK...]:MICROSECONDS[:EVERY]
Status parseDelay(const std::string& value, ReplayOptions* o) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) {
    return Status(Code::kInvalidArgument, fmt::format("--delay: '{}' (RANK[,RANK...]:MICROSECONDS[:EVERY])", value));
  }
  o->delayRanks.clear();
  for (const std::string& word : splitList(value.substr(0, colon))) {
    int rank = 0;
    NS_RETURN_IF_ERROR(parseInt("--delay rank", word, 0, 1 << 24, &rank));
    o->delayRanks.push_back(rank);
  }
  if (o->delayRanks.empty()) return Status(Code::kInvalidArgument, fmt::format("--delay: '{}' names no rank", value));
  const std::string rest = value.substr(colon + 1);
  const size_t second = rest.find(':');
  NS_RETURN_IF_ERROR(parseNumber("--delay microseconds", rest.substr(0, second), 1, 60e6, &o->delayMicroseconds));
  o->delayEvery = 1;
  if (second != std::string::npos) {
    NS_RETURN_IF_ERROR(parseInt("--delay every", rest.substr(second + 1), 1, 1 << 30, &o->delayEvery));
  }
  return Status::Ok();
}

}  // namespace

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
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (!o.input.empty()) {
        return Status(Code::kInvalidArgument, fmt::format("two inputs given: '{}' and '{}'", o.input, arg));
      }
      o.input = arg;
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (name == "--help" || name == "-h") {
      o.help = true;
      continue;
    }
    if (name == "--html") {  // the page (html_report.h); kept apart from the list below
      if (!hasValue && i + 1 >= argc) return Status(Code::kInvalidArgument, "--html needs a value");
      o.htmlPath = hasValue ? value : argv[++i];
      continue;
    }
    if (name == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (name == "--check") {
      o.checkOnly = true;
      continue;
    }
    if (name == "--verify") {
      o.verify = true;
      continue;
    }
    if (name == "--pxn") {
      o.pxn = true;
      continue;
    }
    static const char* const kValued[] = {
        "--transport",  "--ifname",      "--hca",        "--pace",          "--format", "--iterations", "--warmup",
        "--scale",      "--resize",      "--delay",      "--ops",           "--groups", "--timeout",    "--report",
        "--json",       "--rate",        "--rows",       "--world-size",    "--tp",     "--ep",         "--pp",
        "--max-buffer", "--simai-rules", "--intra-node", "--gpus-per-node", "--algo",   "--proto",      "--nccl-log",
        "--comm-group", "--staging"};
    if (std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued)) {
      return Status(Code::kInvalidArgument, fmt::format("unknown option {}", name));
    }
    if (!hasValue) {
      if (i + 1 >= argc) return Status(Code::kInvalidArgument, fmt::format("{} needs a value", name));
      value = argv[++i];
    }
    if (name == "--transport") {
      if (value != "tcp" && value != "ibverbs") {
        return Status(Code::kInvalidArgument, fmt::format("--transport: '{}' (tcp or ibverbs)", value));
      }
      o.transport = value;
    } else if (name == "--ifname") {
      o.ifname = value;
    } else if (name == "--intra-node") {
      if (value != "net" && value != "shm" && value != "auto") {
        return Status(Code::kInvalidArgument, fmt::format("--intra-node: '{}' (auto, net or shm)", value));
      }
      o.intraNode = value;
    } else if (name == "--algo") {
      if (!parseAlgorithm(value, &o.algorithm)) {
        return Status(Code::kInvalidArgument, fmt::format("--algo: '{}' (auto, ring, tree or pat)", value));
      }
    } else if (name == "--nccl-log") {
      o.ncclLog = value;
    } else if (name == "--proto") {
      if (!parseProtocol(value, &o.protocol)) {
        return Status(Code::kInvalidArgument, fmt::format("--proto: '{}' (auto, simple, ll or ll128)", value));
      }
    } else if (name == "--gpus-per-node") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 16, &o.gpusPerNode));
    } else if (name == "--hca") {
      o.hca = value;
    } else if (name == "--pace") {
      if (value == "fast") o.pace = Pace::kFast;
      else if (value == "recorded") o.pace = Pace::kRecorded;
      else return Status(Code::kInvalidArgument, fmt::format("--pace: '{}' (fast or recorded)", value));
    } else if (name == "--format") {
      if (!parseInputFormat(value, &o.format)) {
        return Status(Code::kInvalidArgument, fmt::format("--format: '{}' ({})", value, inputFormatChoices()));
      }
    } else if (name == "--comm-group") {
      o.commGroupFile = value;
    } else if (name == "--iterations") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 24, &o.iterations));
    } else if (name == "--warmup") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 0, 1 << 20, &o.warmup));
    } else if (name == "--scale") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 1e-9, 1e6, &o.scale));
    } else if (name == "--resize") {
      if (value.rfind("dp=", 0) != 0) {
        return Status(Code::kInvalidArgument, fmt::format("--resize: '{}' (dp=N)", value));
      }
      NS_RETURN_IF_ERROR(parseInt(name, value.substr(3), 1, 1 << 20, &o.resizeDp));
    } else if (name == "--delay") {
      NS_RETURN_IF_ERROR(parseDelay(value, &o));
    } else if (name == "--ops") {
      for (const std::string& word : splitList(value)) {
        std::string canonical = canonicalOpFilter(word);
        if (canonical.empty()) return Status(Code::kInvalidArgument, fmt::format("--ops: unknown op '{}'", word));
        o.ops.push_back(canonical);
      }
    } else if (name == "--groups") {
      o.groups = splitList(value);
    } else if (name == "--max-buffer") {
      const int64_t bytes = parseBytes(value);
      if (bytes < 4096) {
        return Status(Code::kInvalidArgument,
                      fmt::format("--max-buffer: '{}' (a size of at least 4K, like 64M or 1G)", value));
      }
      o.maxBufferBytes = static_cast<uint64_t>(bytes);
      o.maxBufferGiven = true;
    } else if (name == "--staging") {
      const int64_t bytes = value == "whole" ? 0 : parseBytes(value);
      if (bytes != 0 && bytes < 4096) {
        return Status(Code::kInvalidArgument,
                      fmt::format("--staging: '{}' (a size of at least 4K, like 8M, or 'whole')", value));
      }
      o.stagingBytes = bytes;
    } else if (name == "--timeout") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 0.1, 1e6, &o.timeoutSeconds));
    } else if (name == "--report") {
      o.csvPath = value;
    } else if (name == "--json") {
      o.jsonPath = value;
    } else if (name == "--rate") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 0, 1e6, &o.rateGBps));
    } else if (name == "--rows") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 0, 1 << 30, &o.maxRows));
    } else if (name == "--world-size") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.worldSize));
    } else if (name == "--tp") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.tp));
    } else if (name == "--ep") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.ep));
    } else if (name == "--pp") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.pp));
    } else if (name == "--simai-rules") {
      std::string error;
      if (!parseSimAiRules(value, &o.simaiRules, &error)) {
        return Status(Code::kInvalidArgument, "--simai-rules: " + error);
      }
    }
  }
  if (o.input.empty() && !o.help) {
    return Status(
        Code::kInvalidArgument,
        "no input: give a trace directory, a SimAI .txt, an AICB .csv, a Chakra trace or PyTorch execution traces");
  }
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
