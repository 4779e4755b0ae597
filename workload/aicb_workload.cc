// AICB CSV reader: header by column name, rows to typed records (in the block of their pipeline stage,
// when the file has stage banners), the layout inferred from group sizes (or given), then every rank
// replays its stage's rows on its own groups (rules in aicb_workload.h).
#include "workload/aicb_workload.h"

#include <array>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "common/log.h"
#include "workload/rank_layout.h"

namespace nshim::workload {
namespace {

enum class RowKind { kCollective, kP2p, kBarrier, kCompute, kEpochEnd };

struct Row {
  int line = 0;
  int stage = -1;  // the pp_stage block it is in; -1 when the file has no stage banners
  RowKind what = RowKind::kCollective;
  OpKind op = OpKind::kAllReduce;
  GroupKind group = GroupKind::kWorld;
  std::optional<double> groupSize;
  double bytes = 0;
  int root = -1;
  const char* rootField = "src";
  int step = 0;  // p2p: -1 the previous stage, +1 the next stage
  std::optional<double> elapsed;
};

struct Columns {
  int commType = -1, commGroup = -1, groupSize = -1, msgSize = -1;
  int src = -1, dst = -1, additional = -1, elapsed = -1;
  size_t count = 0;
};

// How to give DP: through the world size (DP = world / (TP*PP)), the same flag in `ncclshim summary` (and
// diff, convert, plot) and phynet, where the world is the mpirun rank count unless --world-size says.
constexpr const char* kGiveWorld = "pass --world-size N, the job's rank count (DP = N / (TP*PP))";

// Roots beyond this cannot be converted to int; smaller ones are checked against their group later.
constexpr double kMaxRoot = 2147483647.0;

struct TypeName {
  const char* name;
  RowKind what;
  OpKind op;
};
constexpr RowKind kColl = RowKind::kCollective;
constexpr TypeName kTypes[] = {
    {"all_reduce", kColl, OpKind::kAllReduce},
    {"all_gather", kColl, OpKind::kAllGather},
    {"all_gather_into_tensor", kColl, OpKind::kAllGather},
    {"reduce_scatter", kColl, OpKind::kReduceScatter},
    {"reduce_scatter_tensor", kColl, OpKind::kReduceScatter},
    {"all_to_all", kColl, OpKind::kAllToAll},
    {"broadcast", kColl, OpKind::kBroadcast},
    {"reduce", kColl, OpKind::kReduce},
    {"isend", RowKind::kP2p, OpKind::kSend},
    {"irecv", RowKind::kP2p, OpKind::kRecv},
    {"barrier", RowKind::kBarrier, OpKind::kAllReduce},
    {"computation", RowKind::kCompute, OpKind::kAllReduce},
    {"epoch_end", RowKind::kEpochEnd, OpKind::kAllReduce},
};

struct GroupName {
  const char* name;
  GroupKind kind;
};
constexpr GroupName kGroups[] = {{"tp_group", GroupKind::kTp},
                                 {"dp_group", GroupKind::kDp},
                                 {"ep_group", GroupKind::kEp},
                                 {"ep_dp_group", GroupKind::kDpEp},
                                 {"ep_tp_group", GroupKind::kEpTp},
                                 {"pp_group", GroupKind::kPp},
                                 {"embedding_group", GroupKind::kEmbedding},
                                 {"all", GroupKind::kWorld},
                                 {"all_nodes", GroupKind::kWorld}};

std::string_view trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

std::string_view stripPrefix(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix ? text.substr(prefix.size()) : text;
}

// Splits a CSV line; "..." quotes a field ("" inside is a quote).
std::vector<std::string> splitCsv(std::string_view line) {
  std::vector<std::string> fields(1);
  bool inQuotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (inQuotes && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      inQuotes = !inQuotes;
    } else if (c == ',' && !inQuotes) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  for (std::string& field : fields) field = std::string(trim(field));
  return fields;
}

bool isAbsent(std::string_view text) { return text.empty() || text == "None" || text == "nan" || text == "NaN"; }

// An optional non-negative number: absent, "None" or -1 (pandas' fill value) give nullopt.
Status parseOptional(const std::string& file, int line, std::string_view field, std::string_view text,
                     std::optional<double>* out) {
  out->reset();
  if (isAbsent(text)) return Status::Ok();
  double value = 0;
  if (parseNonNegative(text, &value)) {
    *out = value;
    return Status::Ok();
  }
  if (!text.empty() && text.front() == '-' && parseNonNegative(text.substr(1), &value)) {
    if (value == 1) return Status::Ok();
    return inputError(file, line, field, fmt::format("{} is negative", quoted(text)));
  }
  return inputError(file, line, field, fmt::format("{} is not a number", quoted(text)));
}

Result<Columns> parseHeader(const std::string& file, int line, const std::vector<std::string>& fields) {
  Columns cols;
  cols.count = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& name = fields[i];
    int index = static_cast<int>(i);
    if (name == "comm_type") cols.commType = index;
    else if (name == "comm_group") cols.commGroup = index;
    else if (name == "comm_group_size") cols.groupSize = index;
    else if (name == "msg_size") cols.msgSize = index;
    else if (name == "src") cols.src = index;
    else if (name == "dst") cols.dst = index;
    else if (name == "additional") cols.additional = index;
    else if (name == "_elapsed_time") cols.elapsed = index;
  }
  if (cols.commType < 0) {
    return inputError(file, line, "header", "expected the header line (comm_type,comm_group,...)");
  }
  if (cols.commGroup < 0) return inputError(file, line, "comm_group", "missing column");
  if (cols.msgSize < 0) return inputError(file, line, "msg_size", "missing column");
  return cols;
}

Result<Row> parseRow(const std::string& file, const TextLine& line, const Columns& cols, std::vector<std::string> f,
                     double scale) {
  // AICB writes a computation's msg_size tuple "((s, b, h), (h, o))" unquoted: rejoin its pieces.
  if (f.size() > cols.count && !f[cols.msgSize].empty() && f[cols.msgSize][0] == '(') {
    size_t extra = f.size() - cols.count;
    for (size_t i = 1; i <= extra; ++i) f[cols.msgSize] += "," + f[cols.msgSize + i];
    f.erase(f.begin() + cols.msgSize + 1, f.begin() + cols.msgSize + 1 + extra);
  }
  if (f.size() != cols.count) {
    if (!line.terminated && f.size() < cols.count) {
      return inputError(file, line.number, "row", fmt::format("truncated row: {} of {} columns", f.size(), cols.count));
    }
    return inputError(file, line.number, "columns", fmt::format("expected {} columns, found {}", cols.count, f.size()));
  }
  auto column = [&f](int index) -> std::string_view { return index < 0 ? std::string_view() : f[index]; };
  Row row;
  row.line = line.number;
  std::string_view type = stripPrefix(column(cols.commType), "CommType.");
  const TypeName* typeName = nullptr;
  for (const TypeName& t : kTypes) {
    if (type == t.name) typeName = &t;
  }
  if (!typeName) {
    return inputError(file, line.number, "comm_type",
                      fmt::format("unknown comm_type {}", quoted(column(cols.commType))));
  }
  row.what = typeName->what;
  row.op = typeName->op;
  NS_RETURN_IF_ERROR(parseOptional(file, line.number, "_elapsed_time", column(cols.elapsed), &row.elapsed));
  if (row.what == RowKind::kCompute || row.what == RowKind::kEpochEnd) return row;
  if (row.what == RowKind::kBarrier) {
    row.group = GroupKind::kWorld;
    row.bytes = 4;
    return row;
  }

  std::string_view groupText = stripPrefix(column(cols.commGroup), "CommGroup.");
  bool found = false;
  for (const GroupName& g : kGroups) {
    if (groupText == g.name) {
      row.group = g.kind;
      found = true;
    }
  }
  if (!found && !(row.what == RowKind::kP2p && isAbsent(groupText))) {
    return inputError(file, line.number, "comm_group",
                      fmt::format("unknown comm_group {}", quoted(column(cols.commGroup))));
  }
  NS_RETURN_IF_ERROR(parseOptional(file, line.number, "comm_group_size", column(cols.groupSize), &row.groupSize));
  std::string_view size = column(cols.msgSize);
  if (!parseNonNegative(size, &row.bytes)) {
    double ignored;
    bool negative = !size.empty() && size.front() == '-' && parseNonNegative(size.substr(1), &ignored);
    return inputError(file, line.number, "msg_size",
                      fmt::format("{} is {}", quoted(size), negative ? "negative" : "not a number"));
  }
  NS_RETURN_IF_ERROR(checkOpSize(file, line.number, "msg_size", size, row.bytes, scale));
  if (row.what == RowKind::kP2p) {
    row.group = GroupKind::kPp;
    std::string_view direction = column(cols.additional);
    if (direction == "send_prev" || direction == "recv_prev") row.step = -1;
    else if (direction == "send_next" || direction == "recv_next") row.step = 1;
    else {
      return inputError(
          file, line.number, "additional",
          fmt::format("p2p direction {} is not send_prev, send_next, recv_prev or recv_next", quoted(direction)));
    }
    row.op = direction.substr(0, 4) == "send" ? OpKind::kSend : OpKind::kRecv;
    return row;
  }
  if (describe(row.op).rooted) {
    row.rootField = row.op == OpKind::kBroadcast ? "src" : "dst";
    std::optional<double> root;
    NS_RETURN_IF_ERROR(parseOptional(file, line.number, row.rootField,
                                     column(row.op == OpKind::kBroadcast ? cols.src : cols.dst), &root));
    if (root && *root > kMaxRoot) {
      return inputError(file, line.number, row.rootField, fmt::format("root {} is not a rank of a group", *root));
    }
    row.root = root ? static_cast<int>(*root) : 0;
  }
  return row;
}

// Where each group's size was read: the largest comm_group_size, and the first row using the group.
struct SizeSeen {
  double size = 0;
  int line = 0;
  int firstUse = 0;
};

Result<RankLayout> inferLayout(const std::string& file, const std::array<SizeSeen, kNumGroupKinds>& seen,
                               const WorkloadOptions& options) {
  auto at = [&seen](GroupKind kind) -> const SizeSeen& { return seen[static_cast<int>(kind)]; };
  // An error about the size of `kind`, located at the option or at the row the size was read from.
  auto sizeError = [&](GroupKind kind, int option, const char* optionName, const std::string& problem) {
    if (option != 0) return inputError(file, 0, fmt::format("option {}", optionName), problem);
    return inputError(file, at(kind).line, "comm_group_size", problem);
  };
  // A size from the options, else from the rows, else 1 when no row uses the group.
  // A group larger than the largest world is refused before any product of sizes is formed.
  // `remedy` names the flag that gives the size: phynet and the ncclshim tools spell them alike.
  auto pick = [&](GroupKind kind, int option, const char* remedy, int64_t* out) -> Status {
    if (option != 0) {
      *out = option;
    } else if (at(kind).size > options.maxWorldSize) {
      return sizeError(kind, 0, "",
                       fmt::format("{}_group of {} ranks is more than phynet replays (at most {})",
                                   groupKindLabel(kind), at(kind).size, options.maxWorldSize));
    } else if (at(kind).size > 0) {
      *out = std::llround(at(kind).size);
    } else if (at(kind).firstUse > 0) {
      return inputError(
          file, at(kind).firstUse, "comm_group_size",
          fmt::format("size of {}_group unknown (no row gives its comm_group_size): {}", groupKindLabel(kind), remedy));
    } else {
      *out = 1;
    }
    return Status::Ok();
  };
  int64_t tp = 1, pp = 1, ep = 1, dp = 1;
  NS_RETURN_IF_ERROR(pick(GroupKind::kTp, options.tp, "pass --tp N", &tp));
  NS_RETURN_IF_ERROR(pick(GroupKind::kPp, options.pp, "pass --pp N", &pp));
  if (tp < 1) return sizeError(GroupKind::kTp, options.tp, "tp", fmt::format("zero or negative TP {}", tp));
  if (pp < 1) return sizeError(GroupKind::kPp, options.pp, "pp", fmt::format("zero or negative PP {}", pp));
  const int64_t dpSeen = std::llround(at(GroupKind::kDp).size), dpEpSeen = std::llround(at(GroupKind::kDpEp).size);
  if (options.ep == 0 && at(GroupKind::kEp).size == 0 && at(GroupKind::kEpTp).size > 0) {
    ep = std::llround(at(GroupKind::kEpTp).size) / tp;  // ep_tp_group holds TP x EP ranks
  } else if (options.ep == 0 && at(GroupKind::kEp).size == 0 && dpEpSeen > 0 && dpSeen > 0 && dpSeen % dpEpSeen == 0) {
    ep = dpSeen / dpEpSeen;  // ep_group rows without a size (AICB's MoE CSVs): ep_dp_group holds DP / EP ranks
  } else {
    NS_RETURN_IF_ERROR(pick(GroupKind::kEp, options.ep, "pass --ep N", &ep));
  }
  if (ep < 1) return sizeError(GroupKind::kEp, options.ep, "ep", fmt::format("zero or negative EP {}", ep));
  for (auto [kind, value, option, name] :
       {std::tuple{GroupKind::kTp, tp, options.tp, "tp"}, std::tuple{GroupKind::kPp, pp, options.pp, "pp"},
        std::tuple{GroupKind::kEp, ep, options.ep, "ep"}}) {
    if (value > options.maxWorldSize) {
      return sizeError(kind, option, name,
                       fmt::format("{} ranks are more than phynet replays (at most {})", value, options.maxWorldSize));
    }
  }
  int64_t world = options.worldSize;
  if (world < 0) return inputError(file, 0, "option worldSize", fmt::format("negative world size {}", world));
  if (world > options.maxWorldSize) {
    return inputError(file, 0, "option worldSize",
                      fmt::format("{} ranks are more than phynet replays (at most {})", world, options.maxWorldSize));
  }
  if (world > 0) {
    if (tp > world) {
      return sizeError(GroupKind::kTp, options.tp, "tp",
                       fmt::format("TP={} is larger than the world ({} ranks)", tp, world));
    }
    if (pp > world) {
      return sizeError(GroupKind::kPp, options.pp, "pp",
                       fmt::format("PP={} is larger than the world ({} ranks)", pp, world));
    }
    if (world % (tp * pp) != 0) {
      return inputError(file, 0, "option worldSize",
                        fmt::format("{} ranks are not divisible by TP*PP = {}", world, tp * pp));
    }
    dp = world / (tp * pp);
  } else {
    if (at(GroupKind::kDp).size == 0 && at(GroupKind::kDpEp).size > 0) {
      int64_t dpEp = 1;
      NS_RETURN_IF_ERROR(pick(GroupKind::kDpEp, 0, kGiveWorld, &dpEp));
      dp = dpEp * ep;  // ep_dp_group holds DP / EP ranks
    } else {
      NS_RETURN_IF_ERROR(pick(GroupKind::kDp, 0, kGiveWorld, &dp));
    }
    if (dp > options.maxWorldSize) {
      return sizeError(GroupKind::kDp, 0, "",
                       fmt::format("DP={} ranks are more than phynet replays (at most {})", dp, options.maxWorldSize));
    }
    world = tp * dp * pp;
    if (world > options.maxWorldSize) {
      return inputError(
          file, at(GroupKind::kTp).line, "comm_group_size",
          fmt::format("TP*DP*PP = {} ranks are more than phynet replays (at most {})", world, options.maxWorldSize));
    }
  }
  if (ep > dp || dp % ep != 0) {
    return sizeError(GroupKind::kEp, options.ep, "ep", fmt::format("EP={} does not divide DP={}", ep, dp));
  }
  RankLayout layout;
  layout.world = static_cast<int>(world);
  layout.tp = static_cast<int>(tp);
  layout.dp = static_cast<int>(dp);
  layout.ep = static_cast<int>(ep);
  layout.pp = static_cast<int>(pp);
  std::string problem = layout.problem();
  if (!problem.empty()) return inputError(file, 0, "layout", problem);
  return layout;
}

// Every row's group must fit the layout; sizes that disagree with it are reported once per group.
Status checkRows(const std::string& file, const std::vector<Row>& rows, const RankLayout& layout) {
  std::array<bool, kNumGroupKinds> warned{};
  for (const Row& row : rows) {
    if (row.what != RowKind::kCollective && row.what != RowKind::kP2p) continue;
    const int expected = layout.groupSize(row.group);
    if (row.what == RowKind::kP2p && layout.pp == 1 && !warned[static_cast<int>(GroupKind::kPp)]) {
      warned[static_cast<int>(GroupKind::kPp)] = true;
      NS_WARN("{}:{}: pipeline send/recv rows with PP=1 are skipped (pass --pp N)", file, row.line);
    }
    // A job replayed on fewer ranks than it had folds its data-parallel dimension (DP, and EP within
    // it): those groups shrink with the world; TP and PP groups are kept, so they must fit.
    const bool folds = row.group == GroupKind::kDp || row.group == GroupKind::kEp || row.group == GroupKind::kDpEp ||
                       row.group == GroupKind::kWorld;
    if (row.groupSize && *row.groupSize > layout.world && !folds) {
      return inputError(file, row.line, "comm_group_size",
                        fmt::format("the {} group of {} ranks is larger than the world ({}): only the "
                                    "data-parallel groups fold onto fewer ranks",
                                    groupKindLabel(row.group), *row.groupSize, layout.toString()));
    }
    const bool p2pOne = row.group == GroupKind::kPp && row.groupSize && *row.groupSize == 1;
    if (row.groupSize && *row.groupSize != expected && !p2pOne && !warned[static_cast<int>(row.group)]) {
      warned[static_cast<int>(row.group)] = true;
      if (folds && *row.groupSize > expected) {
        NS_WARN(
            "{}:{}: the file's {} group has {} ranks; folded onto {}, it has {} (the data-parallel dimension "
            "shrinks with the world, TP and PP are kept; message sizes stay as written)",
            file, row.line, groupKindLabel(row.group), *row.groupSize, layout.toString(), expected);
      } else {
        NS_WARN("{}:{}: comm_group_size {} differs from the layout's {} group of {} ({}); using the layout", file,
                row.line, *row.groupSize, groupKindLabel(row.group), expected, layout.toString());
      }
    }
    if (row.root >= expected) {
      return inputError(
          file, row.line, row.rootField,
          fmt::format("root {} is outside the {} group of {} ranks", row.root, groupKindLabel(row.group), expected));
    }
  }
  return Status::Ok();
}

// "[ pp_stage3: [rank48, rank49, ...] ]": the block of pipeline stage 3 starts (AICB writes one block
// per stage for PP > 1, each with its own header). Other bracketed lines (AICB's "[rank0 ~ rank7]")
// are not stage banners. Returns the stage, or -1.
int stageOfBanner(std::string_view content) {
  content.remove_prefix(1);  // '['
  while (!content.empty() && content.front() == ' ') content.remove_prefix(1);
  constexpr std::string_view kStage = "pp_stage";
  if (content.substr(0, kStage.size()) != kStage) return -1;
  content.remove_prefix(kStage.size());
  int stage = 0, digits = 0;
  while (!content.empty() && content.front() >= '0' && content.front() <= '9' && digits < 7) {
    stage = stage * 10 + (content.front() - '0');
    content.remove_prefix(1);
    ++digits;
  }
  return digits > 0 && !content.empty() && content.front() == ':' ? stage : -1;
}

// Each stage's rows must be there once the layout is known: a file with stage blocks gives every
// stage of the layout its block, and no block beyond the layout's stages.
Status checkStages(const std::string& file, const std::vector<std::pair<int, int>>& banners, const RankLayout& layout) {
  if (banners.empty()) return Status::Ok();
  std::vector<int> seenAt(layout.pp, 0);
  for (auto [stage, line] : banners) {
    if (stage >= layout.pp) {
      return inputError(
          file, line, "pp_stage",
          fmt::format("stage {} but the layout has {} pipeline stages ({})", stage, layout.pp, layout.toString()));
    }
    if (seenAt[stage] != 0) {
      return inputError(file, line, "pp_stage",
                        fmt::format("a second block of stage {} (the first at line {})", stage, seenAt[stage]));
    }
    seenAt[stage] = line;
  }
  for (int s = 0; s < layout.pp; ++s) {
    if (seenAt[s] == 0) {
      return inputError(file, banners.front().second, "pp_stage",
                        fmt::format("the file has stage blocks but none for stage {} of {}", s, layout.pp));
    }
  }
  return Status::Ok();
}

}  // namespace

const char* aicbCommTypeName(OpKind kind) {
  for (const TypeName& t : kTypes) {
    if (t.what == RowKind::kCollective && t.op == kind) return t.name;
  }
  return nullptr;
}

Result<Workload> parseAicbWorkload(std::string_view text, const std::string& name, const WorkloadOptions& options) {
  if (options.iterations < 1) return inputError(name, 0, "option iterations", "must be at least 1");
  if (!(options.scale > 0) || !std::isfinite(options.scale)) {
    return inputError(name, 0, "option scale", "must be positive");
  }
  std::string storage;
  NS_ASSIGN_OR_RETURN(std::string_view plain, asPlainText(text, name, &storage));
  std::vector<TextLine> lines = splitLines(plain);
  std::optional<Columns> cols;
  std::vector<Row> rows;
  std::vector<std::pair<int, int>> banners;  // (stage, line) of each pp_stage banner
  int stage = -1;
  for (const TextLine& line : lines) {
    std::string_view content = trim(line.text);
    if (!content.empty() && content.front() == '[') {
      if (int s = stageOfBanner(content); s >= 0) {
        banners.emplace_back(s, line.number);
        stage = s;
      }
      continue;
    }
    if (content.empty()) continue;
    std::vector<std::string> fields = splitCsv(content);
    if (!cols) {
      NS_ASSIGN_OR_RETURN(Columns header, parseHeader(name, line.number, fields));
      cols = header;
    } else if (fields[0] != "comm_type") {
      NS_ASSIGN_OR_RETURN(Row row, parseRow(name, line, *cols, std::move(fields), options.scale));
      row.stage = stage;
      rows.push_back(row);
    }
  }
  if (!cols) return inputError(name, 1, "header", "no header line (empty file?)");

  std::array<SizeSeen, kNumGroupKinds> seen{};
  bool isLog = false;
  for (const Row& row : rows) {
    if (row.what == RowKind::kCollective || row.what == RowKind::kP2p || row.what == RowKind::kBarrier) {
      isLog = isLog || row.elapsed.has_value();
    }
    if (row.what != RowKind::kCollective && row.what != RowKind::kP2p) continue;
    SizeSeen& s = seen[static_cast<int>(row.group)];
    if (s.firstUse == 0) s.firstUse = row.line;
    if (row.groupSize && *row.groupSize > s.size) {
      s.size = *row.groupSize;
      s.line = row.line;
    }
  }
  for (auto [stage, line] : banners) {  // stage blocks give the number of pipeline stages too
    SizeSeen& pp = seen[static_cast<int>(GroupKind::kPp)];
    if (stage + 1 > pp.size) {
      pp.size = stage + 1;
      pp.line = line;
    }
  }
  NS_ASSIGN_OR_RETURN(RankLayout layout, inferLayout(name, seen, options));
  NS_RETURN_IF_ERROR(checkRows(name, rows, layout));
  NS_RETURN_IF_ERROR(checkStages(name, banners, layout));
  // Consecutive isend/irecv rows of a block are one batch (Megatron's batch_isend_irecv: one NCCL
  // group); a batch is named by its first row.
  std::vector<size_t> batchOf(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool continues = i > 0 && rows[i].what == RowKind::kP2p && rows[i - 1].what == RowKind::kP2p &&
                           rows[i - 1].stage == rows[i].stage;
    batchOf[i] = continues ? batchOf[i - 1] : i;
  }
  // The embedding group joins the first and the last stage, but AICB's generator writes its rows in
  // one end's block only: then the other end issues them too, as Megatron's ranks do.
  std::vector<bool> blockHasEmbedding(layout.pp, banners.empty());
  for (const Row& row : rows) {
    if (row.group == GroupKind::kEmbedding && row.stage >= 0) blockHasEmbedding[row.stage] = true;
  }
  const int lastStage = layout.pp - 1;
  auto sharedEmbedding = [&](const Row& row, int rankStage) {
    const bool ends = (row.stage == 0 || row.stage == lastStage) && (rankStage == 0 || rankStage == lastStage);
    return row.group == GroupKind::kEmbedding && ends && !blockHasEmbedding[rankStage];
  };
  for (const Row& row : rows) {
    if (row.stage >= 0 && layout.pp > 1 && sharedEmbedding(row, row.stage == 0 ? lastStage : 0)) {
      NS_WARN(
          "{}:{}: embedding_group rows only in the block of stage {}: stage {} issues them too (the "
          "embedding group joins the first and last stage)",
          name, row.line, row.stage, row.stage == 0 ? lastStage : 0);
      break;
    }
  }

  WorkloadBuilder builder(layout, options.onlyRank, options.opSink);
  const uint32_t fileIndex = internSourceFile(name);
  for (int rank = 0; rank < layout.world; ++rank) {
    const int stage = layout.ppIndex(rank);
    for (int it = 0; it < options.iterations; ++it) {
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        if (row.stage >= 0 && row.stage != stage && !sharedEmbedding(row, stage)) continue;  // another stage's
        if (row.what == RowKind::kEpochEnd) continue;
        if (row.what == RowKind::kCompute) {
          if (row.elapsed) builder.addCompute(rank, roundNs(*row.elapsed * (isLog ? 1e6 : 1.0)));
          continue;
        }
        OpRequest request;
        request.kind = row.op;
        request.bytes = row.what == RowKind::kBarrier ? 4 : scaleBytes(row.bytes, options.scale);
        request.root = row.root;
        request.recordedNs = row.elapsed ? roundNs(*row.elapsed * 1e6) : -1;
        request.source = SourceLine(fileIndex, row.line);
        if (row.what == RowKind::kP2p) {
          request.peer = stage + row.step;
          if (request.peer < 0 || request.peer >= layout.pp) continue;  // no neighbour on this side
          request.group = static_cast<int>(1 + (static_cast<size_t>(it) * rows.size() + batchOf[i]) % INT32_MAX);
        }
        builder.addOp(rank, row.group, request);
      }
    }
  }
  return builder.finish(fmt::format("AICB workload {}: {}, {} rows, {} iteration(s)", baseName(name), layout.toString(),
                                    rows.size(), options.iterations));
}

Result<Workload> loadAicbWorkload(const std::string& path, const WorkloadOptions& options) {
  NS_ASSIGN_OR_RETURN(std::string text, readTextFile(path));
  return parseAicbWorkload(text, path, options);
}

}  // namespace nshim::workload
