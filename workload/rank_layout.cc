// Group membership of the TP/DP/EP/PP layout, communicator ids, op sizing and the per-rank workload
// builder used by the SimAI and AICB readers (rules in rank_layout.h).
#include "workload/rank_layout.h"

#include "common/fnv1a.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "workload/workload_check.h"

namespace nshim::workload {

const char* groupKindLabel(GroupKind kind) {
  static const char* kLabels[kNumGroupKinds] = {"tp", "dp",        "ep",    "dp_ep", "ep_tp",
                                                "pp", "embedding", "world", "cp",    "dp_cp"};
  return kLabels[static_cast<int>(kind)];
}

std::vector<int> RankLayout::groupMembers(GroupKind kind, int rank) const {
  const int s = ppIndex(rank), d = dpIndex(rank), t = tpIndex(rank), c = cpIndex(rank);
  const int block = d / ep * ep;  // first dp_idx of this rank's EP group
  std::vector<int> members;
  switch (kind) {
    case GroupKind::kTp:
      for (int i = 0; i < tp; ++i) members.push_back(rankOf(s, d, i, c));
      break;
    case GroupKind::kDp:
      for (int i = 0; i < dp; ++i) members.push_back(rankOf(s, i, t, c));
      break;
    case GroupKind::kCp:
      for (int i = 0; i < cp; ++i) members.push_back(rankOf(s, d, t, i));
      break;
    case GroupKind::kDpCp:
      for (int i = 0; i < dp; ++i) {
        for (int j = 0; j < cp; ++j) members.push_back(rankOf(s, i, t, j));
      }
      break;
    case GroupKind::kEp:
      for (int i = 0; i < ep; ++i) members.push_back(rankOf(s, block + i, t));
      break;
    case GroupKind::kDpEp:
      for (int i = d % ep; i < dp; i += ep) members.push_back(rankOf(s, i, t));
      break;
    case GroupKind::kEpTp:
      for (int i = 0; i < ep; ++i) {
        for (int j = 0; j < tp; ++j) members.push_back(rankOf(s, block + i, j));
      }
      break;
    case GroupKind::kPp:
      for (int i = 0; i < pp; ++i) members.push_back(rankOf(i, d, t, c));
      break;
    case GroupKind::kEmbedding:
      members.push_back(rankOf(0, d, t, c));
      if (pp > 1) members.push_back(rankOf(pp - 1, d, t, c));
      break;
    case GroupKind::kWorld:
      for (int i = 0; i < world; ++i) members.push_back(i);
      break;
  }
  return members;
}

int RankLayout::groupSize(GroupKind kind) const {
  switch (kind) {
    case GroupKind::kTp: return tp;
    case GroupKind::kDp: return dp;
    case GroupKind::kEp: return ep;
    case GroupKind::kDpEp: return dp / ep;
    case GroupKind::kEpTp: return ep * tp;
    case GroupKind::kPp: return pp;
    case GroupKind::kEmbedding: return pp > 1 ? 2 : 1;
    case GroupKind::kWorld: return world;
    case GroupKind::kCp: return cp;
    case GroupKind::kDpCp: return dp * cp;
  }
  return 1;
}

std::string RankLayout::problem() const {
  if (world < 1 || tp < 1 || dp < 1 || ep < 1 || pp < 1 || cp < 1) {
    return fmt::format("group sizes must be positive: {}", toString());
  }
  if (static_cast<int64_t>(tp) * cp * dp * pp != world) {
    return fmt::format("TP*{}DP*PP = {} does not equal the world size {}", cp > 1 ? "CP*" : "",
                       static_cast<int64_t>(tp) * cp * dp * pp, world);
  }
  if (dp % ep != 0) return fmt::format("EP={} does not divide DP={}", ep, dp);
  if (ep > 1 && cp > 1) {
    return fmt::format("EP={} with CP={}: expert groups are not laid out with context parallelism", ep, cp);
  }
  return "";
}

std::string RankLayout::toString() const {
  if (cp > 1) return fmt::format("TP={} CP={} DP={} EP={} PP={} ({} ranks)", tp, cp, dp, ep, pp, world);
  return fmt::format("TP={} DP={} EP={} PP={} ({} ranks)", tp, dp, ep, pp, world);
}

uint64_t commIdFor(std::string_view label, const std::vector<int>& members) {
  const uint8_t end = 0;
  uint64_t hash = fnv1a64(&end, 1, fnv1a64(label.data(), label.size()));
  for (int member : members) {
    const uint32_t value = static_cast<uint32_t>(member);
    const uint8_t bytes[4] = {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                              static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
    hash = fnv1a64(bytes, sizeof(bytes), hash);
  }
  return hash == 0 ? 1 : hash;
}

OpSize sizeOp(OpKind kind, uint64_t bytes, int nranks) {
  // The file's bytes are nccl-tests' size: all ranks' blocks where the kind has one per rank.
  const uint64_t blocks = sizeBlocks(describe(kind), nranks);
  OpSize size;
  if (bytes % (4 * blocks) == 0) {
    size.type = DataType::kFloat32;
    size.count = bytes / (4 * blocks);
  } else {
    size.type = DataType::kUint8;
    size.count = (bytes + blocks - 1) / blocks;
  }
  size.bytes = opBytes(kind, size.count, size.type, nranks);
  return size;
}

uint64_t scaleBytes(double bytes, double scale) {
  constexpr double kTwo63 = 9223372036854775808.0;
  const double scaled = std::nearbyint(bytes * scale);  // llround is unspecified beyond int64
  if (!(scaled > 0)) return 0;
  return scaled >= kTwo63 ? uint64_t{1} << 63 : static_cast<uint64_t>(scaled);
}

Status checkOpSize(const std::string& file, int line, std::string_view field, std::string_view text, double bytes,
                   double scale) {
  const double limit = static_cast<double>(kMaxOpBytes);
  if (bytes * scale <= limit) return Status::Ok();
  // The largest one-digit scale that fits (rounded down, never up past the limit).
  const double fits = limit / bytes;
  const double unit = std::pow(10.0, std::floor(std::log10(fits)));
  const double scaleThatFits = std::floor(fits / unit) * unit;
  const std::string written = text.size() <= 40 ? std::string(text) : quoted(text);
  const std::string atScale = scale == 1.0 ? "" : fmt::format(" at --scale {:g}", scale);
  return inputError(file, line, field,
                    fmt::format("{} bytes{} is more than the {} bytes (1 PiB) phynet replays in one operation; "
                                "shrink it with --scale (--scale {:g} fits)",
                                written, atScale, kMaxOpBytes, scaleThatFits));
}

int64_t roundNs(double ns) {
  if (!(ns > 0)) return 0;
  if (ns >= 9.2e18) return INT64_MAX;
  return std::llround(ns);
}

WorkloadBuilder::WorkloadBuilder(const RankLayout& layout, int onlyRank,
                                 std::function<void(int, const WorkOp&, const CommGroup&)> opSink)
    : layout_(layout), onlyRank_(onlyRank), opSink_(std::move(opSink)) {
  for (int k = 0; k < kNumGroupKinds; ++k) {
    commOfRank_[k].assign(layout_.world, -1);
    nextSeq_[k].assign(layout_.world, 0);
  }
  pendingNs_.assign(layout_.world, 0);
  ranks_.resize(layout_.world);
  for (int r = 0; r < layout_.world; ++r) ranks_[r].globalRank = r;
}

int WorkloadBuilder::commIndex(GroupKind kind, int rank) {
  std::vector<int>& byRank = commOfRank_[static_cast<int>(kind)];
  if (byRank[rank] >= 0) return byRank[rank];
  CommGroup comm;
  comm.members = layout_.groupMembers(kind, rank);
  comm.label = groupKindLabel(kind);
  comm.id = commIdFor(comm.label, comm.members);
  int index = static_cast<int>(comms_.size());
  for (int member : comm.members) byRank[member] = index;
  comms_.push_back(std::move(comm));
  return index;
}

void WorkloadBuilder::countSkipped(const char* why, GroupKind kind, const OpRequest& request) {
  SkippedSources& skipped = skipped_[{why, static_cast<int>(request.kind), static_cast<int>(kind)}];
  if (!skipped.sources.insert(request.source.key()).second) return;
  // The first in the file: the lowest line number (expansion order is not file order).
  if (skipped.first.empty() || request.source.line() < skipped.first.line()) skipped.first = request.source;
}

bool WorkloadBuilder::addOp(int rank, GroupKind kind, const OpRequest& request) {
  if (request.bytes == 0) {
    countSkipped("of 0 bytes", kind, request);
    return false;
  }
  if (layout_.groupSize(kind) < 2) {
    countSkipped("on a group of one rank", kind, request);
    return false;
  }
  if (!layout_.inGroup(kind, rank)) return false;
  const CommGroup& comm = comms_[commIndex(kind, rank)];
  OpSize size = sizeOp(request.kind, request.bytes, static_cast<int>(comm.members.size()));
  WorkOp op;
  op.commId = comm.id;
  op.seq = nextSeq_[static_cast<int>(kind)][rank]++;
  op.kind = request.kind;
  op.count = size.count;
  op.type = size.type;
  op.bytes = size.bytes;
  op.root = request.root;
  op.peer = request.peer;
  op.computeNs = pendingNs_[rank];
  op.recordedNs = request.recordedNs;
  if (op.recordedNs >= 0) op.recordedClock = RecordedClock::kFile;  // AICB's _elapsed_time
  op.group = request.group;
  op.source = request.source;
  if (op.bytes > kMaxOpBytes && (!tooLarge_ || op.source.line() < tooLarge_->source.line())) {
    tooLarge_ = TooLarge{op.source, op.kind, op.bytes};
  }
  pendingNs_[rank] = 0;
  if (opSink_) opSink_(rank, op, comm);
  else if (onlyRank_ < 0 || rank == onlyRank_) ranks_[rank].ops.push_back(std::move(op));
  ++opCount_;
  return true;
}

Result<Workload> WorkloadBuilder::finish(std::string description) {
  if (tooLarge_) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: {} of {} bytes, more than the {} bytes (1 PiB) phynet replays in "
                    "one operation; shrink it with --scale",
                    tooLarge_->source, opKindName(tooLarge_->kind), tooLarge_->bytes, kMaxOpBytes);
  }
  Workload workload;
  workload.worldSize = layout_.world;
  workload.comms = std::move(comms_);
  workload.indexComms();
  workload.ranks = std::move(ranks_);
  workload.onlyRank = onlyRank_;
  workload.description = std::move(description);
  for (const auto& [key, sources] : skipped_) {
    const auto& [why, kind, group] = key;
    workload.skipped.push_back({why, static_cast<OpKind>(kind), groupKindLabel(static_cast<GroupKind>(group)),
                                sources.sources.size(), sources.first});
  }
  return workload;
}

Result<std::string> readTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NS_ERROR(Code::kInvalidArgument, "{}: cannot open the workload file", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return NS_ERROR(Code::kSystemError, "{}: read failed", path);
  return text.str();
}

Status inputError(const std::string& file, int line, std::string_view field, const std::string& problem) {
  if (line <= 0) return NS_ERROR(Code::kInvalidArgument, "{}: {}: {}", file, field, problem);
  return NS_ERROR(Code::kInvalidArgument, "{}:{}: {}: {}", file, line, field, problem);
}

Result<std::string_view> asPlainText(std::string_view text, const std::string& file, std::string* storage) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF") {
    return inputError(file, 1, "encoding", "UTF-16 text: save the file as UTF-8");
  }
  if (text.find('\n') == std::string_view::npos && text.find('\r') != std::string_view::npos) {
    storage->assign(text);
    for (char& c : *storage)
      if (c == '\r') c = '\n';
    return std::string_view(*storage);
  }
  return text;
}

std::vector<TextLine> splitLines(std::string_view text) {
  std::vector<TextLine> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    TextLine line;
    line.number = static_cast<int>(lines.size()) + 1;
    line.terminated = end != std::string_view::npos;
    if (!line.terminated) end = text.size();
    line.text = text.substr(pos, end - pos);
    if (!line.text.empty() && line.text.back() == '\r') line.text.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

bool isBlank(std::string_view text) { return text.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view baseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool parseNonNegative(std::string_view text, double* out) {
  if (text.empty()) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) { return false; }
  *out = value;
  return true;
}

bool parseInt(std::string_view text, int64_t* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}

std::string quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() > kMax) return fmt::format("'{}...'", text.substr(0, kMax));
  return fmt::format("'{}'", text);
}

}  // namespace nshim::workload
