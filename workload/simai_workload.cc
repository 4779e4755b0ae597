// SimAI workload text reader: header keys, layer table, then expansion to per-rank ops (rules and
// format in simai_workload.h).
#include "workload/simai_workload.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "workload/rank_layout.h"

namespace nshim::workload {
namespace {

constexpr int kColumns = 12;
const char* const kColumnNames[kColumns] = {"name",
                                            "dependency",
                                            "forward compute time",
                                            "forward comm op",
                                            "forward comm bytes",
                                            "input-grad compute time",
                                            "input-grad comm op",
                                            "input-grad comm bytes",
                                            "weight-grad compute time",
                                            "weight-grad comm op",
                                            "weight-grad comm bytes",
                                            "update time"};

// The comm ops SimAI names (a suffix _EP / _DP_EP picks the group); read here, written by
// `ncclshim convert` (simAiOpName). SimAI's parser makes no collective of BROADCAST (rule no-broadcast).
struct SimAiOpName {
  std::string_view name;
  OpKind kind;
};
constexpr SimAiOpName kSimAiOps[] = {{"ALLREDUCE", OpKind::kAllReduce},
                                     {"ALLGATHER", OpKind::kAllGather},
                                     {"REDUCESCATTER", OpKind::kReduceScatter},
                                     {"ALLTOALL", OpKind::kAllToAll},
                                     {"BROADCAST", OpKind::kBroadcast}};

enum class Policy { kHybrid, kData, kMicro, kModel };
enum PhaseIndex { kForward = 0, kInputGrad = 1, kWeightGrad = 2 };

struct Header {
  Policy policy = Policy::kHybrid;
  std::string policyWord;
  std::optional<int64_t> tp, ep, pp, world;
  int64_t vpp = 1, ga = 1;  // virtual pipeline stages, gradient accumulation (micro-batches)
  double ppCommBytes = 0;
};

struct Phase {
  int64_t computeNs = 0;
  bool comm = false;
  OpKind kind = OpKind::kAllReduce;
  GroupKind group = GroupKind::kTp;
  double bytes = 0;
};

struct Layer {
  int line = 0;
  Phase phases[3];
};

std::vector<std::string_view> splitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    pos = text.find_first_not_of(" \t", pos);
    if (pos == std::string_view::npos) break;
    size_t end = text.find_first_of(" \t", pos);
    if (end == std::string_view::npos) end = text.size();
    fields.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return fields;
}

Status parseAmount(const std::string& file, int line, std::string_view field, std::string_view text, double* out) {
  if (parseNonNegative(text, out)) return Status::Ok();
  double ignored;
  if (!text.empty() && text.front() == '-' && parseNonNegative(text.substr(1), &ignored)) {
    return inputError(file, line, field, fmt::format("{} is negative", quoted(text)));
  }
  return inputError(file, line, field, fmt::format("{} is not a number", quoted(text)));
}

std::optional<Policy> policyFromWord(std::string_view word) {
  if (word == "HYBRID_TRANSFORMER_FWD_IN_BCKWD" || word == "HYBRID_TRANSFORMER" || word == "HYBRID_CUSTOMIZED" ||
      word == "HYBRID_DATA_MODEL" || word == "HYBRID_MODEL_DATA") {
    return Policy::kHybrid;
  }
  if (word == "DATA") return Policy::kData;
  if (word == "MICRO") return Policy::kMicro;
  if (word == "MODEL" || word == "DISTRIBUTED_INFERENCE") return Policy::kModel;
  return std::nullopt;
}

Result<Header> parseHeader(const std::string& file, std::string_view text, double scale) {
  std::vector<std::string_view> tokens = splitFields(text);
  if (tokens.empty()) return inputError(file, 1, "policy", "the first line is empty");
  Header header;
  header.policyWord = std::string(tokens[0]);
  std::optional<Policy> policy = policyFromWord(tokens[0]);
  if (!policy) return inputError(file, 1, "policy", fmt::format("unknown policy {}", quoted(tokens[0])));
  header.policy = *policy;
  for (size_t i = 1; i < tokens.size(); ++i) {
    std::string_view key = tokens[i];
    if (key.back() == ':') key.remove_suffix(1);
    else if (key != "pp_comm") return inputError(file, 1, key, "expected a `key:` here");
    if (i + 1 >= tokens.size()) return inputError(file, 1, key, "missing value");
    std::string_view value = tokens[++i];
    if (key == "pp_comm") {
      NS_RETURN_IF_ERROR(parseAmount(file, 1, key, value, &header.ppCommBytes));
      NS_RETURN_IF_ERROR(checkOpSize(file, 1, key, value, header.ppCommBytes, scale));
      continue;
    }
    int64_t number = 0;
    if (!parseInt(value, &number)) return inputError(file, 1, key, fmt::format("{} is not an integer", quoted(value)));
    if (key == "checkpoints" || key == "checkpoint_initiates") {
      if (number < 0) return inputError(file, 1, key, fmt::format("negative count {}", number));
      for (int64_t k = 0; k < number; ++k) {
        int64_t layer = 0;
        if (i + 1 >= tokens.size() || !parseInt(tokens[i + 1], &layer)) {
          return inputError(file, 1, key, fmt::format("expected {} layer numbers", number));
        }
        ++i;
      }
      continue;
    }
    if (number < 1) return inputError(file, 1, key, fmt::format("zero or negative size {}", number));
    if (key == "model_parallel_NPU_group") header.tp = number;
    else if (key == "ep") header.ep = number;
    else if (key == "pp") header.pp = number;
    else if (key == "all_gpus") header.world = number;
    else if (key == "vpp") header.vpp = number;
    else if (key == "ga") header.ga = number;
    else NS_WARN("{}:1: unknown key '{}' ignored", file, key);
  }
  return header;
}

// The layout from the header and the options (non-zero options win).
Result<RankLayout> buildLayout(const std::string& file, const Header& header, const WorkloadOptions& options) {
  auto pick = [](int option, const std::optional<int64_t>& fromFile, int64_t fallback) {
    return option != 0 ? static_cast<int64_t>(option) : fromFile.value_or(fallback);
  };
  // Errors about a size name the option (no line) when the size came from the options.
  auto sizeError = [&file](int option, const char* key, const char* optionName, const std::string& problem) {
    if (option != 0) return inputError(file, 0, fmt::format("option {}", optionName), problem);
    return inputError(file, 1, key, problem);
  };
  if (options.worldSize == 0 && !header.world) {
    return inputError(file, 1, "all_gpus", "missing key (or pass --world-size N)");
  }
  const int64_t world = pick(options.worldSize, header.world, 0);
  if (options.tp == 0 && !header.tp && header.policy == Policy::kHybrid) {
    return inputError(file, 1, "model_parallel_NPU_group", "missing key (or pass --tp N)");
  }
  int64_t tp = pick(options.tp, header.tp, header.policy == Policy::kModel ? world : 1);
  int64_t ep = pick(options.ep, header.ep, 1);
  int64_t pp = pick(options.pp, header.pp, 1);
  const int64_t fileTp = tp, fileEp = ep, filePp = pp;
  // SimAI-Phy forms its groups over all its GPUs whatever mpirun starts (SimAiMain.cc: -g, at least
  // 8; Sys::mock_nccl_grobal_group_init: TP and EP from the file, PP 1, DP = GPUs / TP); the
  // processes there are its first ranks. On fewer ranks than the file's groups need, each group is
  // cut to the ranks there: TP to the world, no pipeline stages, EP to DP. Sizes given (--tp, --ep,
  // --pp) are kept, and refused below when they do not fit.
  const bool onRanks = options.worldSize != 0;
  const bool cutTp = onRanks && options.tp == 0 && tp > world && world >= 1;
  if (cutTp) tp = world;
  const bool cutPp = onRanks && options.pp == 0 && tp >= 1 && pp > 1 && pp > world / tp;
  if (cutPp) pp = 1;
  const int wo = options.worldSize, to = options.tp, eo = options.ep, po = options.pp;
  if (world < 1) return sizeError(wo, "all_gpus", "worldSize", fmt::format("zero or negative world size {}", world));
  if (tp < 1) return sizeError(to, "model_parallel_NPU_group", "tp", fmt::format("zero or negative TP {}", tp));
  if (ep < 1) return sizeError(eo, "ep", "ep", fmt::format("zero or negative EP {}", ep));
  if (pp < 1) return sizeError(po, "pp", "pp", fmt::format("zero or negative PP {}", pp));
  if (world > options.maxWorldSize) {
    return sizeError(wo, "all_gpus", "worldSize",
                     fmt::format("{} ranks are more than phynet replays (at most {})", world, options.maxWorldSize));
  }
  if (tp > world) {
    return sizeError(to, "model_parallel_NPU_group", "tp",
                     fmt::format("TP={} is larger than the world ({} ranks)", tp, world));
  }
  if (pp > world) return sizeError(po, "pp", "pp", fmt::format("PP={} is larger than the world ({} ranks)", pp, world));
  if (world % (tp * pp) != 0) {
    return sizeError(wo, "all_gpus", "worldSize",
                     fmt::format("{} ranks are not divisible by TP*PP = {}", world, tp * pp));
  }
  RankLayout layout;
  layout.world = static_cast<int>(world);
  layout.tp = static_cast<int>(tp);
  layout.pp = static_cast<int>(pp);
  layout.dp = static_cast<int>(world / (tp * pp));
  const bool cutEp = onRanks && options.ep == 0 && ep > layout.dp;
  if (cutEp) ep = layout.dp;
  layout.ep = static_cast<int>(ep);
  if (ep > layout.dp) {
    return sizeError(eo, "ep", "ep",
                     fmt::format("EP={} is larger than DP={} (world {} / TP*PP)", ep, layout.dp, world));
  }
  if (layout.dp % ep != 0) return sizeError(eo, "ep", "ep", fmt::format("EP={} does not divide DP={}", ep, layout.dp));
  if (cutTp || cutPp || cutEp) {
    NS_WARN(
        "{}:1: the file's TP={} EP={} PP={}{} do not fit {} ranks: as SimAI-Phy, whose groups span all its "
        "GPUs whatever mpirun starts, each group is cut to the ranks there{}: {} (--tp, --ep, --pp give sizes)",
        file, fileTp, fileEp, filePp, header.world ? fmt::format(" (all_gpus {})", *header.world) : "", world,
        cutPp ? " and no pipeline stages are formed (SimAI-Phy forms none)" : "", layout.toString());
  } else if (options.worldSize != 0 && header.world && *header.world != options.worldSize) {
    NS_WARN("{}:1: all_gpus {} replaced by the world size {}: {}", file, *header.world, options.worldSize,
            layout.toString());
  }
  return layout;
}

Status parseOp(const std::string& file, int line, std::string_view field, std::string_view token, PhaseIndex phase,
               Phase* out) {
  if (token == "NONE") return Status::Ok();
  std::string_view base = token;
  GroupKind group = phase == kWeightGrad ? GroupKind::kDp : GroupKind::kTp;
  auto stripSuffix = [&base](std::string_view suffix) {
    if (base.size() > suffix.size() && base.substr(base.size() - suffix.size()) == suffix) {
      base.remove_suffix(suffix.size());
      return true;
    }
    return false;
  };
  if (stripSuffix("_DP_EP")) group = GroupKind::kDpEp;
  else if (stripSuffix("_EP")) group = GroupKind::kEp;
  const SimAiOpName* named = std::find_if(std::begin(kSimAiOps), std::end(kSimAiOps),
                                          [&base](const SimAiOpName& op) { return base == op.name; });
  if (named == std::end(kSimAiOps)) return inputError(file, line, field, fmt::format("unknown op {}", quoted(token)));
  out->kind = named->kind;
  out->comm = true;
  out->group = group;
  return Status::Ok();
}

Result<Layer> parseLayer(const std::string& file, const TextLine& line, double scale) {
  std::vector<std::string_view> fields = splitFields(line.text);
  if (fields.size() != kColumns) {
    if (!line.terminated && fields.size() < kColumns) {
      return inputError(file, line.number, kColumnNames[fields.size()],
                        fmt::format("truncated line: {} of {} columns", fields.size(), kColumns));
    }
    return inputError(file, line.number, "columns",
                      fmt::format("expected {} columns, found {}", kColumns, fields.size()));
  }
  Layer layer;
  layer.line = line.number;
  int64_t dependency = 0;
  if (!parseInt(fields[1], &dependency)) {
    return inputError(file, line.number, kColumnNames[1], fmt::format("{} is not an integer", quoted(fields[1])));
  }
  for (int p = 0; p < 3; ++p) {
    const int column = 2 + 3 * p;
    Phase& phase = layer.phases[p];
    double computeNs = 0;
    NS_RETURN_IF_ERROR(parseAmount(file, line.number, kColumnNames[column], fields[column], &computeNs));
    phase.computeNs = roundNs(computeNs);
    NS_RETURN_IF_ERROR(
        parseOp(file, line.number, kColumnNames[column + 1], fields[column + 1], static_cast<PhaseIndex>(p), &phase));
    NS_RETURN_IF_ERROR(parseAmount(file, line.number, kColumnNames[column + 2], fields[column + 2], &phase.bytes));
    NS_RETURN_IF_ERROR(
        checkOpSize(file, line.number, kColumnNames[column + 2], fields[column + 2], phase.bytes, scale));
  }
  double updateNs = 0;
  NS_RETURN_IF_ERROR(parseAmount(file, line.number, kColumnNames[11], fields[11], &updateNs));
  return layer;
}

struct Expander {
  const std::string& file;
  const Header& header;
  const std::vector<Layer>& layers;
  const WorkloadOptions& options;
  WorkloadBuilder& builder;
  const uint32_t fileIndex = internSourceFile(file);
  // SimAI's iterate_hybrid_parallel_Transformer_fwd_in_bckwd raises forward sizes below 4096 B
  // (decided once: phase() runs for every layer of every rank).
  const bool fwdInBckwd = header.policyWord == "HYBRID_TRANSFORMER_FWD_IN_BCKWD";

  bool raisesForward() const { return options.simai.forwardAtLeast4096 && fwdInBckwd; }
  // SimAI sends no pp_comm (its Layer.cc counts 2*vpp*GA of them only in its report's exposed
  // pipeline time); the real job sends one per micro-batch and virtual stage each way.
  bool sendsPipeline() const { return options.simai.ppPerMicrobatch && header.ppCommBytes > 0; }

  void phase(int rank, const Layer& layer, PhaseIndex index) {
    const Phase& p = layer.phases[index];
    if (header.policy != Policy::kMicro) builder.addCompute(rank, p.computeNs);
    if (!p.comm) return;
    if ((header.policy == Policy::kData || header.policy == Policy::kMicro) && index != kWeightGrad) return;
    if (header.policy == Policy::kModel && index == kWeightGrad) return;
    if (p.kind == OpKind::kBroadcast && options.simai.noBroadcast) return;  // SimAI: no collective
    OpRequest request;
    request.kind = p.kind;
    const double bytes = index == kForward && raisesForward() && p.bytes > 0 && p.bytes < 4096 ? 4096 : p.bytes;
    request.bytes = scaleBytes(bytes, options.scale);
    if (p.kind == OpKind::kBroadcast) request.root = 0;
    request.source = SourceLine(fileIndex, layer.line);
    builder.addOp(rank, p.group, request);
  }

  void pipeline(int rank, OpKind kind, int peerStage) {
    OpRequest request;
    request.kind = kind;
    request.bytes = scaleBytes(header.ppCommBytes, options.scale);
    request.peer = peerStage;
    request.source = SourceLine(fileIndex, 1);
    for (int64_t k = header.vpp * header.ga; k > 0; --k) builder.addOp(rank, GroupKind::kPp, request);
  }

  void iteration(int rank) {
    if (header.policy == Policy::kMicro && options.simai.microFirstLayer) {  // SimAI's iterate_micro_benchmark
      phase(rank, layers.front(), kWeightGrad);
      return;
    }
    const int stages = builder.layout().pp;
    const int stage = builder.layout().ppIndex(rank);
    const bool piped = stages > 1 && sendsPipeline();
    if (piped && stage > 0) pipeline(rank, OpKind::kRecv, stage - 1);
    for (const Layer& layer : layers) phase(rank, layer, kForward);
    if (piped && stage < stages - 1) pipeline(rank, OpKind::kSend, stage + 1);
    if (piped && stage < stages - 1) pipeline(rank, OpKind::kRecv, stage + 1);
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      phase(rank, *it, kInputGrad);
      phase(rank, *it, kWeightGrad);
    }
    if (piped && stage > 0) pipeline(rank, OpKind::kSend, stage - 1);
  }
};

// What SimAI's rules changed, or would have changed where they are off: "; as SimAI: ..." for the
// workload's description (so phynet's and the tools' reports say it), "" when nothing applies.
std::string describeRules(const Expander& e, const RankLayout& layout) {
  std::vector<std::string> said;
  size_t small = 0;
  for (const Layer& layer : e.layers) {
    const Phase& p = layer.phases[kForward];
    small += p.comm && p.bytes > 0 && p.bytes < 4096 ? 1 : 0;
  }
  if (e.fwdInBckwd && small > 0) {
    said.push_back(e.raisesForward()
                       ? fmt::format("forward ops below 4096 B raised to 4096 B ({} layers)", small)
                       : fmt::format("forward ops below 4096 B kept as written ({} layers; rule min-fwd-4096 off, "
                                     "SimAI raises them)",
                                     small));
  }
  size_t broadcasts = 0;
  for (const Layer& layer : e.layers) {
    for (const Phase& p : layer.phases) broadcasts += p.comm && p.kind == OpKind::kBroadcast ? 1 : 0;
  }
  if (broadcasts > 0) {
    said.push_back(e.options.simai.noBroadcast
                       ? fmt::format("BROADCAST ops replay nothing ({} ops; SimAI's parser makes no collective of "
                                     "them)",
                                     broadcasts)
                       : fmt::format("BROADCAST ops replayed from rank 0 ({} ops; rule no-broadcast off, SimAI "
                                     "replays none)",
                                     broadcasts));
  }
  const int64_t microbatches = e.header.vpp * e.header.ga;
  if (layout.pp > 1 && e.header.ppCommBytes > 0) {
    said.push_back(e.options.simai.ppPerMicrobatch
                       ? fmt::format("vpp*ga = {} pp_comm transfers each way per stage boundary (rule "
                                     "pp-per-microbatch; SimAI sends none)",
                                     microbatches)
                       : fmt::format("no pp_comm transfers (SimAI counts them in its report only; rule "
                                     "pp-per-microbatch sends vpp*ga = {} each way per stage boundary)",
                                     microbatches));
  }
  if (e.header.policy == Policy::kMicro && e.layers.size() > 1) {
    said.push_back(e.options.simai.microFirstLayer
                       ? std::string("MICRO: the first layer's weight-grad op only")
                       : std::string("MICRO: every layer's weight-grad op (rule micro-first-layer off; SimAI "
                                     "issues the first layer's only)"));
  }
  if (said.empty()) return "";
  std::string text = "; as SimAI: " + said[0];
  for (size_t i = 1; i < said.size(); ++i) text += ", " + said[i];
  return text;
}

}  // namespace

const char* simAiOpName(OpKind kind) {
  for (const SimAiOpName& op : kSimAiOps) {
    if (op.kind == kind) return op.name.data();
  }
  return nullptr;
}

Result<Workload> parseSimAiWorkload(std::string_view text, const std::string& name, const WorkloadOptions& options) {
  if (options.iterations < 1) return inputError(name, 0, "option iterations", "must be at least 1");
  if (!(options.scale > 0) || !std::isfinite(options.scale)) {
    return inputError(name, 0, "option scale", "must be positive");
  }
  std::string storage;
  NS_ASSIGN_OR_RETURN(std::string_view plain, asPlainText(text, name, &storage));
  std::vector<TextLine> lines = splitLines(plain);
  if (lines.empty() || isBlank(lines[0].text)) return inputError(name, 1, "policy", "empty file");
  NS_ASSIGN_OR_RETURN(Header header, parseHeader(name, lines[0].text, options.scale));
  NS_ASSIGN_OR_RETURN(RankLayout layout, buildLayout(name, header, options));

  if (lines.size() < 2 || isBlank(lines[1].text)) {
    return inputError(name, 2, "layer count", "missing (file truncated after the header)");
  }
  std::vector<std::string_view> countFields = splitFields(lines[1].text);
  int64_t declared = 0;
  if (!parseInt(countFields[0], &declared) || declared < 0 || countFields.size() != 1) {
    return inputError(name, 2, "layer count", fmt::format("{} is not a layer count", quoted(lines[1].text)));
  }
  std::vector<Layer> layers;
  for (size_t i = 2; i < lines.size(); ++i) {
    if (isBlank(lines[i].text)) continue;
    NS_ASSIGN_OR_RETURN(Layer layer, parseLayer(name, lines[i], options.scale));
    layers.push_back(std::move(layer));
  }
  if (layers.empty()) {
    return inputError(name, static_cast<int>(lines.size()) + 1, "layer", "no layer lines (file truncated?)");
  }
  if (static_cast<int64_t>(layers.size()) != declared) {
    NS_WARN("{}:2: declares {} layer lines but has {}; using the {} present", name, declared, layers.size(),
            layers.size());
  }
  if (layout.pp > 1 && header.ppCommBytes > 0 && options.simai.ppPerMicrobatch &&
      header.vpp > options.maxPipelineTransfers / header.ga) {
    return inputError(name, 1, "ga",
                      fmt::format("vpp*ga = {}*{} pp_comm transfers each way per stage boundary are "
                                  "more than phynet replays (at most {}); --simai-rules without "
                                  "pp-per-microbatch sends none, as SimAI",
                                  header.vpp, header.ga, options.maxPipelineTransfers));
  }
  if (layout.pp > 1 && header.ppCommBytes <= 0 && options.simai.ppPerMicrobatch) {
    NS_WARN("{}:1: PP={} without pp_comm: pipeline send/recv between stages are not replayed", name, layout.pp);
  }

  WorkloadBuilder builder(layout, options.onlyRank, options.opSink);
  Expander expander{name, header, layers, options, builder};
  for (int rank = 0; rank < layout.world; ++rank) {
    for (int it = 0; it < options.iterations; ++it) expander.iteration(rank);
  }
  return builder.finish(fmt::format("SimAI workload {}: {} {}, {} layers, {} iteration(s){}", baseName(name),
                                    header.policyWord, layout.toString(), layers.size(), options.iterations,
                                    describeRules(expander, layout)));
}

bool parseSimAiRules(std::string_view text, SimAiRules* out, std::string* error) {
  if (text == "all") {
    *out = SimAiRules{true, true, true, true};
    return true;
  }
  SimAiRules rules{false, false, false, false};
  if (text == "none") {
    *out = rules;
    return true;
  }
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    if (name == "min-fwd-4096") rules.forwardAtLeast4096 = true;
    else if (name == "pp-per-microbatch") rules.ppPerMicrobatch = true;
    else if (name == "micro-first-layer") rules.microFirstLayer = true;
    else if (name == "no-broadcast") rules.noBroadcast = true;
    else {
      *error = fmt::format(
          "'{}' is not a SimAI rule (all, none, or a list of min-fwd-4096, micro-first-layer, "
          "no-broadcast, pp-per-microbatch)",
          name);
      return false;
    }
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  *out = rules;
  return true;
}

Result<Workload> loadSimAiWorkload(const std::string& path, const WorkloadOptions& options) {
  NS_ASSIGN_OR_RETURN(std::string text, readTextFile(path));
  return parseSimAiWorkload(text, path, options);
}

}  // namespace nshim::workload
