// Workload -> Chakra execution-trace files (chakra_export.h says what each node carries).
#include "workload/chakra_export.h"

#include <map>
#include <unordered_map>

#include "workload/chakra_file.h"

namespace nshim::workload {
namespace {

int64_t chakraCommType(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce: return chakra::ALL_REDUCE;
    case OpKind::kReduce: return chakra::REDUCE;
    case OpKind::kAllGather: return chakra::ALL_GATHER;
    case OpKind::kGather: return chakra::GATHER;
    case OpKind::kScatter: return chakra::SCATTER;
    case OpKind::kBroadcast: return chakra::BROADCAST;
    case OpKind::kAllToAll: return chakra::ALL_TO_ALL;
    case OpKind::kReduceScatter: return chakra::REDUCE_SCATTER;
    default: return -1;
  }
}

void addInt(chakra::Node& node, const char* name, int64_t value) {
  chakra::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_int64_val(value);
}

void addText(chakra::Node& node, const char* name, const std::string& value) {
  chakra::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_string_val(value);
}

void addBool(chakra::Node& node, const char* name, bool value) {
  chakra::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_bool_val(value);
}

}  // namespace

Result<ChakraExport> exportChakra(const Workload& workload) {
  if (workload.onlyRank >= 0) {
    return NS_ERROR(Code::kInternal, "a Chakra export needs every rank's operations (the workload holds rank {}'s)",
                    workload.onlyRank);
  }
  ChakraExport out;
  // pg_name per communicator: "0" the whole world (ASTRA-sim's default group, in no file), then 1, 2, ...
  // for the others of more than one rank, which comm_group.json lists.
  std::unordered_map<uint64_t, size_t> commIndex;
  std::vector<std::string> pgName(workload.comms.size());
  int nextGroup = 1;
  out.commGroupJson = "{";
  for (size_t i = 0; i < workload.comms.size(); ++i) {
    const CommGroup& comm = workload.comms[i];
    commIndex.emplace(comm.id, i);
    if (static_cast<int>(comm.members.size()) == workload.worldSize) {
      pgName[i] = "0";
    } else if (comm.members.size() > 1) {
      pgName[i] = std::to_string(nextGroup++);
      out.commGroupJson +=
          fmt::format("{}\n  \"{}\": [{}]", nextGroup > 2 ? "," : "", pgName[i], fmt::join(comm.members, ", "));
    }
  }
  out.commGroupJson += "\n}\n";
  chakra::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  chakra::AttributeProto* source = metadata.add_attr();
  source->set_name("source");
  source->set_string_val("ncclshim convert --to chakra: " + workload.description);
  for (const RankWork& rank : workload.ranks) {
    std::vector<chakra::Node> nodes;
    int64_t lastCompute = -1;
    std::unordered_map<uint64_t, uint64_t> lastOfComm;  // communicator -> node id of its previous op
    std::map<std::pair<int, int>, int64_t> transfers;   // (src, dst) -> transfers so far
    for (const WorkOp& op : rank.ops) {
      auto comm = commIndex.find(op.commId);
      if (comm == commIndex.end()) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: rank {}: an operation on a communicator the workload does not "
                        "list",
                        op.source, rank.globalRank);
      }
      const CommGroup& group = workload.comms[comm->second];
      if (op.computeNs >= 1000) {
        chakra::Node& compute = nodes.emplace_back();
        compute.set_id(nodes.size() - 1);
        compute.set_name("compute");
        compute.set_type(chakra::COMP_NODE);
        compute.set_duration_micros(static_cast<uint64_t>((op.computeNs + 500) / 1000));
        if (lastCompute >= 0) compute.add_data_deps(static_cast<uint64_t>(lastCompute));
        addBool(compute, "is_cpu_op", false);
        lastCompute = static_cast<int64_t>(compute.id());
      }
      const std::string label = group.label.empty() ? fmt::format("comm{}", comm->second + 1) : group.label;
      if (group.members.size() == 1) {
        // A collective of one rank moves nothing over a network; ASTRA-sim would never complete it (a
        // group of one has no phases). It stays in the timeline as compute of its recorded duration.
        chakra::Node& alone = nodes.emplace_back();
        alone.set_id(nodes.size() - 1);
        alone.set_name(fmt::format("{} {} #{} (one rank: no communication)", opKindName(op.kind), label, op.seq));
        alone.set_type(chakra::COMP_NODE);
        alone.set_duration_micros(op.recordedNs > 0 ? static_cast<uint64_t>((op.recordedNs + 500) / 1000) : 0);
        if (lastCompute >= 0) alone.add_data_deps(static_cast<uint64_t>(lastCompute));
        addBool(alone, "is_cpu_op", false);
        lastCompute = static_cast<int64_t>(alone.id());
        ++out.oneRankOps;
        continue;
      }
      chakra::Node& node = nodes.emplace_back();
      node.set_id(nodes.size() - 1);
      if (lastCompute >= 0) node.add_data_deps(static_cast<uint64_t>(lastCompute));
      auto previous = lastOfComm.find(op.commId);
      if (previous != lastOfComm.end()) node.add_ctrl_deps(previous->second);
      lastOfComm[op.commId] = node.id();
      if (op.recordedNs >= 1000) node.set_duration_micros(static_cast<uint64_t>((op.recordedNs + 500) / 1000));
      addBool(node, "is_cpu_op", false);
      const int64_t commType = chakraCommType(op.kind);
      if (commType >= 0) {
        node.set_type(chakra::COMM_COLL_NODE);
        addInt(node, "comm_type", commType);
        addInt(node, "comm_size", static_cast<int64_t>(op.bytes));
        if (describe(op.kind).rooted) addInt(node, "root", op.root);
      } else {
        const bool send = op.kind == OpKind::kSend;
        if (op.peer < 0 || static_cast<size_t>(op.peer) >= group.members.size()) {
          return NS_ERROR(Code::kInvalidArgument, "{}: rank {}: peer {} is not a rank of its {}-rank communicator",
                          op.source, rank.globalRank, op.peer, group.members.size());
        }
        const int peer = group.members[static_cast<size_t>(op.peer)];
        const int src = send ? rank.globalRank : peer;
        const int dst = send ? peer : rank.globalRank;
        node.set_type(send ? chakra::COMM_SEND_NODE : chakra::COMM_RECV_NODE);
        addInt(node, "comm_src", src);
        addInt(node, "comm_dst", dst);
        addInt(node, "comm_size", static_cast<int64_t>(op.bytes));
        addInt(node, "comm_tag", transfers[{src, dst}]++);
      }
      addText(node, "pg_name", pgName[comm->second]);
      ++out.commNodes;
    }
    out.nodes += nodes.size();
    out.rankFiles.push_back(serializeChakraFile(metadata, nodes));
  }
  return out;
}

}  // namespace nshim::workload
