// Chakra execution traces -> Workload: the files of a set, the comm-group file, then each rank's
// nodes in dependency order turned into operations (chakra_workload.h says how).
#include "workload/chakra_workload.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "common/fnv1a.h"
#include "workload/chakra_file.h"
#include "workload/chakra_groups.h"
#include "workload/input_file.h"
#include "workload/input_format.h"
#include "workload/trace_workload.h"
#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

using chakra::Node;

// The nodes of one file in a topological order of their dependencies (ties: smaller id first).
// Dependencies on ids the file does not hold are counted in *dangling and ignored.
Result<std::vector<const Node*>> dependencyOrder(const std::vector<Node>& nodes, const std::string& name,
                                                 size_t* dangling) {
  std::unordered_map<uint64_t, size_t> index;
  index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!index.emplace(nodes[i].id(), i).second) {
      return NS_ERROR(Code::kInvalidArgument, "{}: node {}: the id is used by two nodes", name, nodes[i].id());
    }
  }
  std::vector<uint32_t> waiting(nodes.size(), 0);
  std::vector<std::vector<uint32_t>> children(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto addDeps = [&](const google::protobuf::RepeatedField<uint64_t>& deps) {
      for (uint64_t dep : deps) {
        auto it = index.find(dep);
        if (it == index.end()) {
          ++*dangling;
          continue;
        }
        children[it->second].push_back(static_cast<uint32_t>(i));
        ++waiting[i];
      }
    };
    addDeps(nodes[i].data_deps());
    addDeps(nodes[i].ctrl_deps());
  }
  auto later = [&](uint32_t a, uint32_t b) { return nodes[a].id() > nodes[b].id(); };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(later)> ready(later);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push(static_cast<uint32_t>(i));
  }
  std::vector<const Node*> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const uint32_t i = ready.top();
    ready.pop();
    order.push_back(&nodes[i]);
    for (uint32_t child : children[i]) {
      if (--waiting[child] == 0) ready.push(child);
    }
  }
  if (order.size() != nodes.size()) {
    uint64_t smallest = UINT64_MAX;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (waiting[i] > 0) smallest = std::min<uint64_t>(smallest, nodes[i].id());
    }
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: node {}: its dependencies form a cycle ({} nodes never become "
                    "ready)",
                    name, smallest, nodes.size() - order.size());
  }
  return order;
}

bool isCommNode(int type) {
  return type == chakra::COMM_COLL_NODE || type == chakra::COMM_SEND_NODE || type == chakra::COMM_RECV_NODE;
}

Result<OpKind> collectiveKind(int64_t commType, const std::string& where) {
  switch (commType) {
    case chakra::ALL_REDUCE:
    case chakra::BARRIER: return OpKind::kAllReduce;
    case chakra::REDUCE: return OpKind::kReduce;
    case chakra::ALL_GATHER: return OpKind::kAllGather;
    case chakra::GATHER: return OpKind::kGather;
    case chakra::SCATTER: return OpKind::kScatter;
    case chakra::BROADCAST: return OpKind::kBroadcast;
    case chakra::ALL_TO_ALL: return OpKind::kAllToAll;
    case chakra::REDUCE_SCATTER:
    case chakra::REDUCE_SCATTER_BLOCK: return OpKind::kReduceScatter;
    default: break;
  }
  return NS_ERROR(Code::kInvalidArgument, "{}: attribute 'comm_type': {} is not a Chakra collective (0..9)", where,
                  commType);
}

// Everything a rank's conversion shares: the groups, the communicators made of them so far.
class ChakraBuilder {
 public:
  ChakraBuilder(int world, ChakraGroups groups) : world_(world), groups_(std::move(groups)) {}

  // The communicator of a node: its pg_name's group, else the world. Adds it on first use.
  Result<const CommGroup*> commOf(const Node& node, const std::string& where) {
    std::optional<std::string> pg = attrText(node, "pg_name");
    std::string key = "world";
    std::vector<int> members;
    if (pg && (*pg == "0" || pg->empty())) pg.reset();  // ASTRA-sim: "" and "0" are the whole world
    if (pg && !groups_.empty()) {
      auto it = groups_.find(*pg);
      if (it == groups_.end()) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: attribute 'pg_name': group '{}' is not one of the trace's "
                        "process groups",
                        where, *pg);
      }
      key = "group " + *pg;
      members = it->second.members;
    } else {
      if (pg) unresolvedPgNames_ = true;
      for (int r = 0; r < world_; ++r) members.push_back(r);
    }
    auto found = byKey_.find(key);
    if (found != byKey_.end()) return &comms_[found->second];
    CommGroup comm;
    comm.id = fnv1a64(key.data(), key.size(), fnv1a64(members.data(), members.size() * sizeof(int)));
    if (comm.id == 0) comm.id = 1;
    comm.members = std::move(members);
    byKey_.emplace(key, comms_.size());
    comms_.push_back(std::move(comm));
    return &comms_.back();
  }

  std::deque<CommGroup>& comms() { return comms_; }
  bool unresolvedPgNames() const { return unresolvedPgNames_; }

 private:
  int world_;
  ChakraGroups groups_;
  std::deque<CommGroup> comms_;
  std::map<std::string, size_t> byKey_;
  bool unresolvedPgNames_ = false;
};

struct RankStats {
  std::map<int, size_t> leftOut;  // node type -> nodes
  size_t dangling = 0;
  size_t crossCommDeps = 0;
  size_t zeroSized = 0;
};

// One node -> one operation (not yet sequenced); an error names the node.
Result<WorkOp> commOp(const Node& node, int rank, ChakraBuilder& builder, const std::string& where) {
  WorkOp op;
  op.type = DataType::kUint8;
  op.reduce = ReduceKind::kSum;
  std::string error;
  auto attr = [&](std::string_view key, bool required) -> Result<std::optional<int64_t>> {
    std::optional<int64_t> value = attrInt(node, key, &error);
    if (!error.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: {}", where, error);
    if (!value && required) return NS_ERROR(Code::kInvalidArgument, "{}: no attribute '{}'", where, key);
    return value;
  };
  NS_ASSIGN_OR_RETURN(const CommGroup* comm, builder.commOf(node, where));
  const int nranks = static_cast<int>(comm->members.size());
  const int self = commRankOf(*comm, rank);
  if (self < 0) {
    return NS_ERROR(Code::kInvalidArgument, "{}: rank {} is not a member of its group (ranks {}..{})", where, rank,
                    comm->members.front(), comm->members.back());
  }
  op.commId = comm->id;
  NS_ASSIGN_OR_RETURN(std::optional<int64_t> size, attr("comm_size", true));
  if (*size < 0) return NS_ERROR(Code::kInvalidArgument, "{}: attribute 'comm_size': {} is negative", where, *size);
  op.bytes = static_cast<uint64_t>(*size);
  if (node.type() == chakra::COMM_COLL_NODE) {
    NS_ASSIGN_OR_RETURN(std::optional<int64_t> commType, attr("comm_type", true));
    NS_ASSIGN_OR_RETURN(op.kind, collectiveKind(*commType, where));
    if (*commType == chakra::BARRIER) op.bytes = 1;
    const CollectiveDescriptor& d = describe(op.kind);
    const uint64_t blocks = sizeBlocks(d, nranks);
    if (op.bytes % blocks != 0) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: attribute 'comm_size': {} bytes of {} do not divide into {} "
                      "equal blocks (one per rank of its group)",
                      where, op.bytes, chakraCollectiveName(*commType), blocks);
    }
    op.count = op.bytes / blocks;
    if (d.rooted) {
      NS_ASSIGN_OR_RETURN(std::optional<int64_t> root, attr("root", false));
      op.root = static_cast<int>(root.value_or(0));
      if (op.root < 0 || op.root >= nranks) {
        return NS_ERROR(Code::kInvalidArgument, "{}: attribute 'root': {} is not a rank of its {}-rank group", where,
                        op.root, nranks);
      }
    }
  } else {
    const bool send = node.type() == chakra::COMM_SEND_NODE;
    op.kind = send ? OpKind::kSend : OpKind::kRecv;
    const char* key = send ? "comm_dst" : "comm_src";
    NS_ASSIGN_OR_RETURN(std::optional<int64_t> peer, attr(key, true));
    const int peerRank = *peer >= 0 && *peer <= INT_MAX ? commRankOf(*comm, static_cast<int>(*peer)) : -1;
    if (peerRank < 0) {  // itself is allowed: NCCL sends to and receives from its own rank
      return NS_ERROR(Code::kInvalidArgument, "{}: attribute '{}': {} is not a rank of its {}-rank group", where, key,
                      *peer, nranks);
    }
    op.peer = peerRank;
    op.count = op.bytes;
  }
  if (node.duration_micros() > 0 && node.duration_micros() < static_cast<uint64_t>(INT64_MAX / 1000)) {
    op.recordedNs = static_cast<int64_t>(node.duration_micros() * 1000);
    op.recordedClock = RecordedClock::kFile;
  }
  return op;
}

Status convertRank(const std::vector<Node>& nodes, int rank, const std::string& name, ChakraBuilder& builder,
                   RankWork* out, RankStats* stats, std::vector<SkippedRows>* skipped) {
  NS_ASSIGN_OR_RETURN(std::vector<const Node*> order, dependencyOrder(nodes, name, &stats->dangling));
  const uint32_t file = internSourceFile(name);
  std::unordered_map<uint64_t, uint64_t> commOfNode;  // comm node id -> communicator
  std::map<uint64_t, uint64_t> seq;
  int64_t pendingNs = 0;
  int groupCounter = 0;
  bool computeSinceOp = true;
  for (const Node* node : order) {
    const int type = node->type();
    if (type == chakra::COMP_NODE) {
      pendingNs = std::min<int64_t>(
          pendingNs + static_cast<int64_t>(std::min<uint64_t>(node->duration_micros(), INT64_MAX / 2000) * 1000),
          INT64_MAX / 2);
      computeSinceOp = true;
      continue;
    }
    if (!isCommNode(type)) {
      ++stats->leftOut[type];
      continue;
    }
    const std::string where = fmt::format("{}: node {} ({})", name, node->id(), chakraNodeTypeName(type));
    NS_ASSIGN_OR_RETURN(WorkOp op, commOp(*node, rank, builder, where));
    op.source = SourceLine(file, static_cast<int64_t>(std::min<uint64_t>(node->id(), UINT32_MAX)));
    commOfNode.emplace(node->id(), op.commId);
    for (uint64_t dep : node->data_deps()) {
      auto it = commOfNode.find(dep);
      if (it != commOfNode.end() && it->second != op.commId) ++stats->crossCommDeps;
    }
    for (uint64_t dep : node->ctrl_deps()) {
      auto it = commOfNode.find(dep);
      if (it != commOfNode.end() && it->second != op.commId) ++stats->crossCommDeps;
    }
    if (op.bytes == 0) {
      ++stats->zeroSized;
      auto same =
          std::find_if(skipped->begin(), skipped->end(), [&](const SkippedRows& s) { return s.kind == op.kind; });
      if (same == skipped->end()) {
        same = skipped->insert(skipped->end(), SkippedRows{"0 bytes", op.kind, "chakra", 0, op.source});
      }
      ++same->rows;
      continue;
    }
    const bool p2p = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
    if (p2p && !computeSinceOp && !out->ops.empty()) {
      WorkOp& previous = out->ops.back();
      const bool previousP2p = previous.kind == OpKind::kSend || previous.kind == OpKind::kRecv;
      if (previousP2p && previous.commId == op.commId) {
        if (previous.group == 0) previous.group = ++groupCounter;
        op.group = previous.group;
      }
    }
    op.seq = seq[op.commId]++;
    op.computeNs = pendingNs;
    pendingNs = 0;
    computeSinceOp = false;
    out->ops.push_back(op);
  }
  return Status::Ok();
}

}  // namespace

Result<ChakraFileSet> findChakraFiles(const std::string& path) {
  struct stat st {};
  std::string dir;
  std::string wanted;  // the NAME to keep; "" any (a directory)
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    dir = path;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  } else {
    const size_t slash = path.rfind('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    int64_t rank = 0;
    if (!splitEtName(base, &wanted, &rank)) {
      if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {  // one file without a rank: rank 0 of 1
        ChakraFileSet single;
        single.prefix = path;
        single.pathByRank = {path};
        return single;
      }
      wanted = base;  // a prefix, as ASTRA-sim takes it
    }
  }
  NS_ASSIGN_OR_RETURN(std::vector<std::string> names, listDirectory(dir));
  std::map<std::string, std::map<int64_t, std::string>> sets;
  for (const std::string& n : names) {
    std::string prefix;
    int64_t rank = 0;
    if (!splitEtName(n, &prefix, &rank) || (!wanted.empty() && prefix != wanted)) continue;
    sets[prefix][rank] = dir + "/" + n;
  }
  if (sets.empty()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: no Chakra trace files ({}.<rank>.et)", path,
                    wanted.empty() ? "NAME" : wanted);
  }
  if (sets.size() > 1) {
    std::string list;
    for (const auto& [prefix, files] : sets) list += (list.empty() ? "" : ", ") + prefix;
    return NS_ERROR(Code::kInvalidArgument, "{}: holds {} Chakra traces ({}): give one NAME prefix", path, sets.size(),
                    list);
  }
  ChakraFileSet set;
  set.prefix = dir + "/" + sets.begin()->first;
  const auto& files = sets.begin()->second;
  const int64_t world = files.rbegin()->first + 1;
  if (world > (1 << 16)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: rank {} is beyond the largest world ncclshim replays (65536)",
                    files.rbegin()->second, world - 1);
  }
  set.pathByRank.assign(static_cast<size_t>(world), "");
  for (const auto& [rank, file] : files) set.pathByRank[static_cast<size_t>(rank)] = file;
  for (int64_t r = 0; r < world; ++r) {
    if (set.pathByRank[r].empty()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: rank {} of {} missing: no {}.{}.et (found {} of {} files)", path, r,
                      world, set.prefix, r, files.size(), world);
    }
  }
  return set;
}

Result<Workload> parseChakraWorkload(const std::vector<std::string>& rankBytes, const std::vector<std::string>& names,
                                     const std::string& commGroupJson, const ChakraOptions& options) {
  const int world = static_cast<int>(rankBytes.size());
  if (world < 1 || world > options.maxWorldSize) {
    return NS_ERROR(Code::kInvalidArgument, "a Chakra trace of {} ranks (1..{} are replayed)", world,
                    options.maxWorldSize);
  }
  std::vector<ChakraFile> files;
  for (int r = 0; r < world; ++r) {
    NS_ASSIGN_OR_RETURN(ChakraFile file, parseChakraFile(rankBytes[r], names[r]));
    files.push_back(std::move(file));
  }
  // Groups: the trace's own process-group list where a file has one, else the comm-group file.
  ChakraGroups groups;
  std::string groupSource;
  for (int r = 0; r < world && groups.empty(); ++r) {
    NS_ASSIGN_OR_RETURN(groups, groupsFromMetadata(files[r].nodes, names[r], world));
    if (!groups.empty()) groupSource = fmt::format("process groups from the METADATA_NODE of {}", names[r]);
  }
  if (groups.empty() && !commGroupJson.empty()) {
    const std::string groupsName = options.commGroupFile.empty() ? "comm_group.json" : options.commGroupFile;
    NS_ASSIGN_OR_RETURN(groups, parseCommGroupJson(commGroupJson, groupsName, world));
    groupSource = "groups from " + groupsName;
  }
  const bool haveGroups = !groups.empty();
  ChakraBuilder builder(world, std::move(groups));
  Workload workload;
  workload.worldSize = world;
  workload.ranks.resize(static_cast<size_t>(world));
  RankStats stats;
  const std::string version = files[0].metadata.version();
  for (int r = 0; r < world; ++r) {
    workload.ranks[r].globalRank = r;
    RankWork scratch;
    RankWork* out = options.onlyRank < 0 || options.onlyRank == r ? &workload.ranks[r] : &scratch;
    NS_RETURN_IF_ERROR(convertRank(files[r].nodes, r, names[r], builder, out, &stats, &workload.skipped));
    files[r].nodes.clear();
  }
  workload.onlyRank = options.onlyRank;
  size_t ops = 0;
  for (const RankWork& rank : workload.ranks) ops += rank.ops.size();
  for (CommGroup& comm : builder.comms()) workload.comms.push_back(std::move(comm));
  labelCommsByShape(workload);
  workload.indexComms();
  std::string text = fmt::format(
      "Chakra ET (version {}): {} ranks, {} communicators, {} operations; sizes are byte "
      "counts (uint8: Chakra has no data type)",
      version.empty() ? "?" : version, world, workload.comms.size(), ops);
  if (haveGroups) {
    text += "; " + groupSource;
  } else {
    text += builder.unresolvedPgNames() ? "; nodes name process groups but neither the trace nor a comm-group file "
                                          "lists them: every operation runs on the whole world"
                                        : "; no process groups: every operation runs on the whole world";
  }
  size_t leftOut = 0;
  std::string kinds;
  for (const auto& [type, count] : stats.leftOut) {
    leftOut += count;
    kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", count, chakraNodeTypeName(type));
  }
  if (leftOut) text += fmt::format("; {} nodes that are not communication or compute left out ({})", leftOut, kinds);
  if (stats.dangling) text += fmt::format("; {} dependencies on nodes not in the files ignored", stats.dangling);
  if (stats.crossCommDeps) {
    text += fmt::format(
        "; {} dependencies between operations of different communicators are not waited for "
        "(issued in dependency order, the replay may overlap them)",
        stats.crossCommDeps);
  }
  workload.description = std::move(text);
  return workload;
}

Result<Workload> loadChakraWorkload(const std::string& path, const ChakraOptions& options) {
  NS_ASSIGN_OR_RETURN(ChakraFileSet set, findChakraFiles(path));
  std::vector<std::string> bytes;
  for (const std::string& file : set.pathByRank) {
    NS_ASSIGN_OR_RETURN(std::string content, readInputFile(file));  // plain or gzip, as Chakra's readers take
    bytes.push_back(std::move(content));
  }
  std::string groupFile = options.commGroupFile;
  if (groupFile.empty()) {
    const std::string beside = set.prefix.substr(0, set.prefix.rfind('/')) + "/comm_group.json";
    struct stat st {};
    if (::stat(beside.c_str(), &st) == 0 && S_ISREG(st.st_mode)) groupFile = beside;
  }
  std::string groups;
  if (!groupFile.empty()) {
    NS_ASSIGN_OR_RETURN(groups, readInputFile(groupFile, 256u << 20));
    if (groups.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: the comm-group file is empty", groupFile);
  }
  ChakraOptions resolved = options;
  resolved.commGroupFile = groupFile;
  NS_ASSIGN_OR_RETURN(Workload workload, parseChakraWorkload(bytes, set.pathByRank, groups, resolved));
  workload.description += fmt::format(" ({}.<rank>.et)", set.prefix);
  return workload;
}

}  // namespace nshim::workload
