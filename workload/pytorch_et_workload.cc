// PyTorch execution traces -> Workload: each file is read into calls (pytorch_et_nodes.h), then the
// files' ranks, the world and the communicators are resolved and every rank's calls become
// operations; files and directories are read here, plain or gzip-compressed (pytorch_et_workload.h
// has the rules).
#include "workload/pytorch_et_workload.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <optional>

#include "common/fnv1a.h"
#include "workload/input_file.h"
#include "workload/input_format.h"
#include "workload/pytorch_et_nodes.h"
#include "workload/source_line.h"
#include "workload/trace_workload.h"
#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

using pytorch_et::Call;
using pytorch_et::Notes;
using pytorch_et::RankFile;
using pytorch_et::Role;

// A call's group as its file gives it: the description's entry, or start/stride/size.
struct GroupSpec {
  std::string name;
  const std::vector<int>* listed = nullptr;  // the description's members
  int64_t start = 0, stride = 0, size = 0;   // otherwise members start + i * stride, i < size
  int64_t count() const { return listed ? static_cast<int64_t>(listed->size()) : size; }
  int member(int64_t i) const {
    return listed ? (*listed)[static_cast<size_t>(i)] : static_cast<int>(start + stride * i);
  }
};

std::optional<GroupSpec> describedGroup(const RankFile& f, const Call& c, int maxWorld) {
  std::optional<std::string> name = c.pgName;
  if (!name && c.backendId) {
    auto it = f.backendNames.find(*c.backendId);
    if (it != f.backendNames.end()) name = it->second;
  }
  if (name) {
    auto it = f.groups.find(*name);
    if (it != f.groups.end()) return GroupSpec{*name, &it->second};
  }
  if (c.start && c.stride && c.pgSize && *c.start >= 0 && *c.stride >= 1 && *c.pgSize >= 1 &&
      *c.start + *c.stride * (*c.pgSize - 1) < maxWorld) {
    return GroupSpec{name.value_or(""), nullptr, *c.start, *c.stride, *c.pgSize};
  }
  return std::nullopt;
}

std::string whereOf(const RankFile& f, const Call& c) {
  return fmt::format("{}:{}: node {} (record_param_comms)", f.name, c.line, c.id);
}

// The rank a file's content gives: the rank argument of a call whose rank argument is the caller's,
// through its group's members.
Status rankFromContent(RankFile& f, int maxWorld) {
  const Call* first = nullptr;
  for (const Call& c : f.calls) {
    if (c.role != Role::kSelf || !c.rankArg) continue;
    auto group = describedGroup(f, c, maxWorld);
    const bool world = !c.pgSize || (f.declaredWorld != 0 && *c.pgSize == f.declaredWorld);
    if (!group && !world) continue;  // a group whose members the trace does not give
    const int64_t size = group ? group->count() : maxWorld;
    if (*c.rankArg < 0 || *c.rankArg >= size) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'inputs': rank argument {} is not a rank of its {}-rank group",
                      whereOf(f, c), *c.rankArg, size);
    }
    const int rank = group ? group->member(*c.rankArg) : static_cast<int>(*c.rankArg);
    if (first != nullptr && rank != f.rank) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: field 'inputs': makes this file rank {}, node {} (line {}) made it "
                      "rank {}",
                      whereOf(f, c), rank, first->id, first->line, f.rank);
    }
    f.rank = rank;
    if (first == nullptr) first = &c;
  }
  return Status::Ok();
}

// "rank-3.json", "trace_3.json", "et.3.json", "rank-3.json.gz" -> 3; -1 when the name ends in no number.
int rankFromName(const std::string& path) {
  std::string stem = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (stem.ends_with(".gz")) stem.resize(stem.size() - 3);
  if (stem.ends_with(".json")) stem.resize(stem.size() - 5);
  size_t digits = stem.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(stem[digits - 1]))) --digits;
  if (digits == stem.size() || stem.size() - digits > 6) return -1;
  return std::stoi(stem.substr(digits));
}

class CommTable {
 public:
  explicit CommTable(int world) : world_(world) {}

  Result<const CommGroup*> commOf(const RankFile& f, const Call& c, int rank, Notes* notes) {
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", static_cast<const void*>(&f), c.pgName.value_or("-"),
                                        c.backendId.value_or(-2), c.start.value_or(-2), c.stride.value_or(-2),
                                        c.pgSize.value_or(-2), c.pgSize == 1 ? rank : -1);
    if (auto it = byCall_.find(key); it != byCall_.end()) return &comms_[it->second];
    std::string name;
    std::vector<int> members;
    if (std::optional<GroupSpec> spec = describedGroup(f, c, world_)) {
      name = spec->name;
      for (int64_t i = 0; i < spec->count(); ++i) members.push_back(spec->member(i));
    } else if (c.pgSize == 1) {
      name = c.pgName.value_or("") + "#" + std::to_string(rank), members = {rank};
    } else if (c.pgSize && *c.pgSize != world_) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: field 'pg_name': group '{}' of {} ranks: the trace does not say "
                      "which (no process-group description entry, no global_rank_start/stride)",
                      whereOf(f, c), c.pgName.value_or(""), *c.pgSize);
    } else {
      notes->worldGuess = true;
      name = c.pgName.value_or(f.defaultPg), members.resize(static_cast<size_t>(world_));
      std::iota(members.begin(), members.end(), 0);
    }
    for (int m : members) {
      if (m >= world_) {
        return NS_ERROR(Code::kInvalidArgument, "{}: group '{}' holds rank {}, beyond the trace's {} ranks",
                        whereOf(f, c), name, m, world_);
      }
    }
    if (c.pgSize && *c.pgSize != 0 && static_cast<size_t>(*c.pgSize) != members.size()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'pg_size': {} but group '{}' has {} ranks", whereOf(f, c),
                      *c.pgSize, name, members.size());
    }
    uint64_t id = fnv1a64(name.data(), name.size(), fnv1a64(members.data(), members.size() * sizeof(int)));
    id = id == 0 ? 1 : id;
    auto it = byId_.find(id);
    if (it == byId_.end()) {
      it = byId_.emplace(id, comms_.size()).first;
      comms_.push_back(CommGroup{id, std::move(members), ""});
    }
    byCall_.emplace(key, it->second);
    return &comms_[it->second];
  }

  std::deque<CommGroup>& comms() { return comms_; }
  const CommGroup& find(uint64_t id) const { return comms_[byId_.at(id)]; }

 private:
  int world_;
  std::deque<CommGroup> comms_;
  std::map<uint64_t, size_t> byId_;
  std::map<std::string, size_t> byCall_;  // a call's group fields in a file -> its communicator
};

int64_t toNs(double us) { return us <= 0 ? 0 : us >= 1e15 ? int64_t{1000000000000000000} : std::llround(us * 1000); }

// Per-peer elements of an all-to-all side: splits are dim-0 rows, each total / sum(splits) elements.
Result<std::vector<int64_t>> pieces(const std::vector<int64_t>& split, int64_t total, int n, const std::string& where,
                                    const char* field, const char* totalField) {
  if (split.empty()) {
    if (total % n != 0) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} elements do not split evenly over {} ranks", where,
                      totalField, total, n);
    }
    return std::vector<int64_t>(static_cast<size_t>(n), total / n);
  }
  if (split.size() != static_cast<size_t>(n)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} entries for a group of {} ranks", where, field,
                    split.size(), n);
  }
  const int64_t sum = std::accumulate(split.begin(), split.end(), int64_t{0});
  if (sum == 0 ? total != 0 : total % sum != 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: field '{}': {} elements are not a whole number of rows of the splits "
                    "(sum {})",
                    where, totalField, total, sum);
  }
  std::vector<int64_t> out;
  for (int64_t s : split) out.push_back(sum == 0 ? 0 : s * (total / sum));
  return out;
}

void skip(std::vector<SkippedRows>* skipped, const char* why, const WorkOp& op) {
  for (SkippedRows& s : *skipped) {
    if (s.kind == op.kind && s.why == why) return void(++s.rows);
  }
  skipped->push_back(SkippedRows{why, op.kind, "its group", 1, op.source});
}

bool timed(const RankFile& f) {
  return !f.calls.empty() && std::all_of(f.calls.begin(), f.calls.end(), [](const Call& c) { return c.ts >= 0; });
}

// NCCL's count of a call that is not an all-to-all (the per-rank block where the call has one).
int64_t countOf(const Call& c, int n) {
  switch (c.kind) {
    case OpKind::kReduceScatter:
    case OpKind::kScatter: return c.outElems ? c.outElems : c.inElems / n;
    case OpKind::kRecv: return c.outElems ? c.outElems : c.inElems;
    case OpKind::kAllGather:
    case OpKind::kGather: return c.inElems ? c.inElems : c.outElems / n;
    default: return c.inElems ? c.inElems : c.outElems;
  }
}

// One rank's calls -> operations.
Status convertRank(const RankFile& f, int rank, CommTable& table, Notes* notes, RankWork* out,
                   std::vector<SkippedRows>* skipped) {
  const uint32_t file = internSourceFile(f.name);
  const bool withTimes = timed(f);
  std::map<uint64_t, uint64_t> seq;
  std::map<uint64_t, int> selfOf;  // communicator -> this rank's place in it
  int groups = 0;
  double previousEnd = -1;
  for (const Call& c : f.calls) {
    const std::string where = whereOf(f, c);
    NS_ASSIGN_OR_RETURN(const CommGroup* comm, table.commOf(f, c, rank, notes));
    const int n = static_cast<int>(comm->members.size());
    auto [mine, added] = selfOf.emplace(comm->id, 0);
    if (added) mine->second = commRankOf(*comm, rank);
    const int self = mine->second;
    if (self < 0) {
      return NS_ERROR(Code::kInvalidArgument, "{}: rank {} is not a member of its group ({} ranks from {})", where,
                      rank, n, comm->members.front());
    }
    WorkOp op;
    op.commId = comm->id;
    op.kind = c.kind;
    op.type = c.type;
    op.source = SourceLine(file, c.line);
    op.count = static_cast<uint64_t>(countOf(c, n));
    if (withTimes) {
      op.issueNs = toNs(c.ts - f.calls.front().ts);
      op.recordedNs = c.dur >= 0 ? toNs(c.dur) : -1;
      if (op.recordedNs >= 0) op.recordedClock = RecordedClock::kCpuCall;  // record_param_comms: the CPU side
      op.computeNs = previousEnd >= 0 ? toNs(c.ts - previousEnd) : 0;
      previousEnd = c.ts + std::max(c.dur, 0.0);
    }
    if (c.role != Role::kSelf) {
      if (!c.rankArg || *c.rankArg < 0 || *c.rankArg >= n || (c.role == Role::kPeer && *c.rankArg == self)) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: field 'inputs': the {} (the Int before the collective name) is "
                        "not {} rank of its {}-rank group",
                        where, c.role == Role::kRoot ? "root" : "peer", c.role == Role::kRoot ? "a" : "another", n);
      }
      (c.role == Role::kRoot ? op.root : op.peer) = static_cast<int>(*c.rankArg);
    }
    std::vector<WorkOp> ops;
    if (c.kind == OpKind::kAllToAll) {
      NS_ASSIGN_OR_RETURN(auto sends, pieces(c.inSplit, c.inElems, n, where, "in_split_size", "in_msg_nelems"));
      NS_ASSIGN_OR_RETURN(auto recvs, pieces(c.outSplit, c.outElems, n, where, "out_split_size", "out_msg_nelems"));
      const bool even = std::all_of(sends.begin(), sends.end(), [&](int64_t s) { return s == sends[0]; }) &&
                        std::all_of(recvs.begin(), recvs.end(), [&](int64_t r) { return r == sends[0]; });
      op.count = static_cast<uint64_t>(sends[0]);
      if (even) ops.push_back(op);
      for (int p = 0; !even && p < n; ++p) {  // PyTorch's order: to and from each peer in turn
        for (OpKind kind : {OpKind::kSend, OpKind::kRecv}) {
          const int64_t elems = kind == OpKind::kSend ? sends[p] : recvs[p];
          if (p == self || elems == 0) continue;  // PyTorch copies the self piece locally
          WorkOp piece = op;
          piece.kind = kind, piece.peer = p, piece.count = static_cast<uint64_t>(elems);
          piece.origin = OpOrigin::kAllToAllV, piece.group = groups + 1;
          piece.computeNs = ops.empty() ? op.computeNs : 0;
          ops.push_back(piece);
        }
      }
      if (!even && ops.empty()) skip(skipped, "with nothing for another rank", op);
      groups += !even && !ops.empty();
    } else {
      ops.push_back(op);
    }
    for (WorkOp& o : ops) {
      o.bytes = opBytes(o.kind, o.count, o.type, n);
      if (o.count == 0) {
        skip(skipped, "of 0 bytes", o);
        continue;
      }
      o.seq = seq[o.commId]++;
      out->ops.push_back(o);
    }
  }
  return Status::Ok();
}

// The files' ranks and world (pytorch_et_workload.h), then every rank's operations.
Result<Workload> buildWorkload(std::vector<RankFile> files, bool oneFile, Notes notes,
                               const PyTorchEtOptions& options) {
  int declared = 0, highest = -1;
  const RankFile* declaredBy = nullptr;
  for (RankFile& f : files) {
    NS_RETURN_IF_ERROR(rankFromContent(f, options.maxWorldSize));
    if (f.rank < 0) f.rank = rankFromName(f.name), f.rankFromName = f.rank >= 0;
    if (f.declaredWorld != 0 && declared != 0 && f.declaredWorld != declared) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: a world of {} ranks (its default process group), but {} says {}: "
                      "the files are not of one job",
                      f.name, f.declaredWorld, declaredBy->name, declared);
    }
    if (f.declaredWorld != 0) declared = f.declaredWorld, declaredBy = &f;
    highest = std::max(highest, f.rank);
    for (const auto& [name, members] : f.groups) {
      highest = std::max(highest, *std::max_element(members.begin(), members.end()));
    }
    for (const Call& c : f.calls) {
      std::optional<GroupSpec> g = describedGroup(f, c, options.maxWorldSize);
      if (g && !g->listed) highest = std::max(highest, g->member(g->count() - 1));
      if (c.pgSize) highest = std::max(highest, static_cast<int>(*c.pgSize) - 1);
    }
  }
  const int world = declared != 0 ? declared : std::max(highest + 1, oneFile ? 1 : static_cast<int>(files.size()));
  if (world > options.maxWorldSize) {
    return NS_ERROR(Code::kInvalidArgument, "{}: a world of {} ranks (at most {} are replayed)", files[0].name, world,
                    options.maxWorldSize);
  }
  std::vector<const RankFile*> byRank(static_cast<size_t>(world), nullptr);
  for (RankFile& f : files) {
    if (oneFile && f.rank < 0) f.rank = 0;
    if (f.rank < 0) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: cannot tell its rank: no all-reduce, all-gather, reduce-scatter, "
                      "all-to-all or barrier node names it, and the name ends in no number (rank-<N>.json)",
                      f.name);
    }
    if (f.rank >= world) {
      return NS_ERROR(Code::kInvalidArgument, "{}: rank {} (from its {}), beyond the trace's {} ranks", f.name, f.rank,
                      f.rankFromName ? "name" : "content", world);
    }
    if (byRank[f.rank] != nullptr) {
      return NS_ERROR(Code::kInvalidArgument, "{} and {} are both rank {}", byRank[f.rank]->name, f.name, f.rank);
    }
    byRank[f.rank] = &f;
  }
  for (int r = 0; !oneFile && r < world; ++r) {
    if (byRank[r] == nullptr) {
      return NS_ERROR(Code::kInvalidArgument,
                      "rank {} of {} missing: no file of rank {} among the {} files "
                      "({}, ...){}",
                      r, world, r, files.size(), files[0].name,
                      files.size() == 1 ? " (give the file itself to replay one rank's trace on every rank)" : "");
    }
  }
  Workload workload;
  workload.worldSize = world;
  workload.onlyRank = options.onlyRank;
  workload.ranks.resize(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) workload.ranks[r].globalRank = r;
  CommTable table(world);
  size_t ops = 0, calls = 0, nodes = 0, idle = 0;
  for (const RankFile& f : files) {
    RankWork work;
    NS_RETURN_IF_ERROR(convertRank(f, f.rank, table, &notes, &work, &workload.skipped));
    calls += f.calls.size(), nodes += f.nodes, idle += f.idle;
    for (const WorkOp& op : work.ops) {  // one file for every rank: collectives on all ranks only
      const bool everyRank = !describe(op.kind).pointToPoint && table.find(op.commId).members.size() == byRank.size();
      if (oneFile && world > 1 && !everyRank) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: one file of a {}-rank job is replayed by every rank, which needs "
                        "every operation to be a collective on all ranks: this {}{} is not (give every rank's file)",
                        op.source, world, opKindName(op.kind),
                        op.origin == OpOrigin::kAllToAllV ? " of an uneven all-to-all" : "");
      }
    }
    for (int r = oneFile ? 0 : f.rank; r < (oneFile ? world : f.rank + 1); ++r) {
      if (options.onlyRank < 0 || options.onlyRank == r) workload.ranks[r].ops = work.ops, ops += work.ops.size();
    }
  }
  for (CommGroup& comm : table.comms()) workload.comms.push_back(std::move(comm));
  labelCommsByShape(workload);
  workload.indexComms();
  const RankFile& first = files[0];
  std::string text = fmt::format(
      "PyTorch execution trace{}: {} ranks, {} communicators, {} operations from {} "
      "record_param_comms nodes ({} wait/init and {} other nodes left out)",
      first.schema.empty() ? "" : " (schema " + first.schema + ")", world, workload.comms.size(), ops, calls + idle,
      idle, nodes - calls - idle);
  if (oneFile && world > 1) text += fmt::format("; one file (rank {}): every rank replays its operations", first.rank);
  text += std::all_of(files.begin(), files.end(), timed) ? "; times from the nodes' ts and durations (Kineto-linked)"
                                                         : "; the trace has no times: no compute gaps";
  if (notes.worldGuess) text += "; operations without group information run on the whole world";
  for (const RankFile& f : files) {
    if (f.truncatedDescription) text += fmt::format("; {}: its process-group description is cut short", f.name);
  }
  for (const std::string& t : notes.byteTypes) {
    text += fmt::format("; dtype '{}' has no NCCL type: moved as bytes (uint8)", t);
  }
  workload.description = std::move(text);
  workload.recordedClock = RecordedClock::kCpuCall;  // record_param_comms' dur: the CPU side of the call
  return workload;
}

// A directory's file: its (decompressed) text when its first 4 KiB hold "nodes", "" when it is not
// a trace; an error naming the file when it cannot be read.
Result<std::string> readTraceFile(const std::string& file) {
  const std::string head = readInputHead(file, 4096);
  if (head.empty()) {  // empty, or unreadable: readInputFile says why
    Result<std::string> whole = readInputFile(file, 4096);
    return whole.ok() ? Result<std::string>(std::string()) : whole.status();
  }
  if (head.find("\"nodes\"") == std::string::npos) return std::string();
  return readInputFile(file);
}

Result<Workload> parseFiles(const std::vector<std::string_view>& texts, const std::vector<std::string>& names,
                            bool oneFile, const PyTorchEtOptions& options) {
  if (texts.empty() || texts.size() != names.size() || texts.size() > static_cast<size_t>(options.maxWorldSize)) {
    return NS_ERROR(Code::kInvalidArgument, "{} PyTorch execution trace files: 1..{} are replayed", texts.size(),
                    options.maxWorldSize);
  }
  Notes notes;
  std::vector<RankFile> files;
  for (size_t i = 0; i < texts.size(); ++i) {
    NS_ASSIGN_OR_RETURN(RankFile f, pytorch_et::readRankFile(texts[i], names[i], options, &notes));
    files.push_back(std::move(f));
  }
  return buildWorkload(std::move(files), oneFile, std::move(notes), options);
}

}  // namespace

Result<Workload> parsePyTorchEtRank(std::string_view text, const std::string& name, const PyTorchEtOptions& options) {
  return parseFiles({text}, {name}, /*oneFile=*/true, options);
}

Result<Workload> parsePyTorchEtRanks(const std::vector<std::string_view>& texts, const std::vector<std::string>& names,
                                     const PyTorchEtOptions& options) {
  return parseFiles(texts, names, /*oneFile=*/false, options);
}

Result<Workload> loadPyTorchEtWorkload(const std::string& path, const PyTorchEtOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NS_ERROR(Code::kInvalidArgument, "{}: no such file or directory", path);
  if (!S_ISDIR(st.st_mode)) {
    NS_ASSIGN_OR_RETURN(const std::string text, readInputFile(path));
    return parsePyTorchEtRank(text, path, options);
  }
  NS_ASSIGN_OR_RETURN(const std::vector<std::string> entries, listDirectory(path));
  std::vector<std::string> names;
  for (const std::string& n : entries) {
    if ((n.size() > 5 && n.ends_with(".json")) || (n.size() > 8 && n.ends_with(".json.gz"))) {
      names.push_back(path + "/" + n);
    }
  }
  Notes notes;
  std::vector<RankFile> files;  // read one by one: a file's text is dropped once its calls are decoded
  size_t other = 0;
  for (const std::string& n : names) {
    NS_ASSIGN_OR_RETURN(const std::string text, readTraceFile(n));
    if (text.empty() && ++other) continue;
    if (files.size() == static_cast<size_t>(options.maxWorldSize)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: more than {} trace files", path, options.maxWorldSize);
    }
    NS_ASSIGN_OR_RETURN(RankFile f, pytorch_et::readRankFile(text, n, options, &notes));
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: no PyTorch execution trace (*.json or *.json.gz with \"nodes\")",
                    path);
  }
  NS_ASSIGN_OR_RETURN(Workload workload, buildWorkload(std::move(files), /*oneFile=*/false, std::move(notes), options));
  if (other) workload.description += fmt::format("; {} other *.json(.gz) files in {} ignored", other, path);
  return workload;
}

}  // namespace nshim::workload
