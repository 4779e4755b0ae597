// SimAI workload text and AICB CSV writers (formats and mapping in workload_writers.h).
#include "tools/inspect/workload_writers.h"

#include <string>
#include <vector>

#include "tools/inspect/output_file.h"
#include "workload/aicb_workload.h"
#include "workload/simai_workload.h"

namespace nshim::tools {

namespace {

using workload::GroupKind;
using workload::OpKind;

struct Slot {
  const JobOp* op = nullptr;
};

struct Layer {
  Slot inputGrad;
  Slot weightGrad;
};

// "ALLREDUCE", "ALLTOALL_EP", "ALLGATHER_DP_EP": the slot's default group needs no suffix.
std::string opToken(const JobOp& op) {
  const char* name = workload::simAiOpName(op.kind);
  std::string token = name ? name : "NONE";
  if (op.group == GroupKind::kEp) token += "_EP";
  if (op.group == GroupKind::kDpEp) token += "_DP_EP";
  return token;
}

// In order: an op joins the last layer's free weight-grad slot when it may run there (not TP);
// otherwise it opens a new layer, in the input-grad slot unless it is a DP op.
std::vector<Layer> pack(const std::vector<JobOp>& ops) {
  std::vector<Layer> layers;
  for (const JobOp& op : ops) {
    if (!layers.empty() && !layers.back().weightGrad.op && op.group != GroupKind::kTp) {
      layers.back().weightGrad.op = &op;
      continue;
    }
    layers.emplace_back();
    if (op.group != GroupKind::kDp) layers.back().inputGrad.op = &op;
    else layers.back().weightGrad.op = &op;
  }
  return layers;
}

void writeSlot(FILE* out, const Slot& slot) {
  if (!slot.op) {
    fmt::print(out, "\t0\tNONE\t0");
    return;
  }
  fmt::print(out, "\t{}\t{}\t{}", slot.op->computeNs, opToken(*slot.op), slot.op->bytes);
}

}  // namespace

void writeSimAi(FILE* out, const InferredJob& job) {
  const workload::RankLayout& l = job.layout;
  std::vector<Layer> layers = pack(job.ops);
  fmt::print(out,
             "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {} ep: {} pp: 1 vpp: 1 ga: 1 "
             "all_gpus: {} checkpoints: 0 checkpoint_initiates: 0\n{}\n",
             l.tp, l.ep, l.world, layers.size());
  // SimAI walks the backward pass from the last layer line to the first.
  for (size_t i = layers.size(); i-- > 0;) {
    fmt::print(out, "ncclshim_{}\t-1\t0\tNONE\t0", layers.size() - 1 - i);
    writeSlot(out, layers[i].inputGrad);
    writeSlot(out, layers[i].weightGrad);
    fmt::print(out, "\t0\n");
  }
}

// ---- AICB CSV

namespace {

const char* aicbType(OpKind kind) {
  const char* name = workload::aicbCommTypeName(kind);
  return name ? name : "unknown";
}

const char* aicbGroup(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp: return "tp_group";
    case GroupKind::kDp: return "dp_group";
    case GroupKind::kEp: return "ep_group";
    case GroupKind::kDpEp: return "ep_dp_group";
    case GroupKind::kEpTp: return "ep_tp_group";
    case GroupKind::kPp: return "pp_group";
    case GroupKind::kEmbedding: return "embedding_group";
    case GroupKind::kWorld: return "all";
    case GroupKind::kCp: return "cp_group";
    case GroupKind::kDpCp: return "dp_cp_group";
  }
  return "all";
}

}  // namespace

void writeAicb(FILE* out, const InferredJob& job) {
  const workload::RankLayout& l = job.layout;
  bool timed = false;
  for (const JobOp& op : job.ops) timed = timed || op.recordedNs >= 0;
  fmt::print(out,
             "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,"
             "count\n");
  for (GroupKind kind : {GroupKind::kTp, GroupKind::kDp, GroupKind::kEp, GroupKind::kPp}) {
    fmt::print(out, "CommType.all_reduce,CommGroup.{},{},0,ncclshim.layout,None,None,,None,None,None,1\n",
               aicbGroup(kind), l.groupSize(kind));
  }
  for (const JobOp& op : job.ops) {
    if (op.computeNs > 0) {
      std::string elapsed = timed ? fmt::format("{:.6f}", op.computeNs * 1e-6) : std::to_string(op.computeNs);
      fmt::print(out, "CommType.computation,None,None,0,ncclshim.compute,None,None,,{},None,None,1\n", elapsed);
    }
    std::string src = op.kind == OpKind::kBroadcast ? std::to_string(op.root) : "None";
    std::string dst = op.kind == OpKind::kReduce ? std::to_string(op.root) : "None";
    std::string elapsed = op.recordedNs >= 0 ? fmt::format("{:.6f}", op.recordedNs * 1e-6) : "None";
    fmt::print(out, "CommType.{},CommGroup.{},{},{},{},{},{},,{},None,None,1\n", aicbType(op.kind), aicbGroup(op.group),
               l.groupSize(op.group), op.bytes, csvField(op.source), dst, src, elapsed);
  }
}

}  // namespace nshim::tools
