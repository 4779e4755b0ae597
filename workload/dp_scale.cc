// Scaling a captured job by data parallelism (dp_scale.h).
#include "workload/dp_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "trace/trace_format.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

constexpr uint64_t kMegatronPadding = 128;  // Megatron pads a sharded buffer to lcm(DP, 128) elements

bool isWholeBuffer(trace::OpCode op) {
  return op == trace::OpCode::kAllReduce || op == trace::OpCode::kBroadcast || op == trace::OpCode::kReduce;
}
bool isSharded(trace::OpCode op) { return op == trace::OpCode::kReduceScatter || op == trace::OpCode::kAllGather; }
// Groups whose members and ops do not change with the data-parallel size.
bool keepsItsOps(GroupKind kind) {
  return kind == GroupKind::kTp || kind == GroupKind::kPp || kind == GroupKind::kEp || kind == GroupKind::kEpTp;
}
bool isCommEvent(trace::CommEvent event) {
  return event == trace::CommEvent::kInit || event == trace::CommEvent::kSplit;
}

}  // namespace

Result<ShardCount> resizeShard(uint64_t count, int oldSize, int newSize) {
  const uint64_t total = count * static_cast<uint64_t>(oldSize);
  if (count != 0 && total / static_cast<uint64_t>(oldSize) != count)
    return NS_ERROR(Code::kInvalidArgument, "count overflows");
  const uint64_t oldPad = std::lcm(static_cast<uint64_t>(oldSize), kMegatronPadding);
  const uint64_t newPad = std::lcm(static_cast<uint64_t>(newSize), kMegatronPadding);
  ShardCount out;
  if (total % oldPad == 0) {
    out.megatronPadding = true;
    out.count = (total + newPad - 1) / newPad * newPad / static_cast<uint64_t>(newSize);
    // The unpadded buffer lies in (total - oldPad, total]: padding it to newPad gives this exactly
    // when oldPad divides newPad, else a value at most oldPad below.
    out.withinElements = newPad % oldPad == 0 ? 0 : oldPad;
    return out;
  }
  if (total % static_cast<uint64_t>(newSize) == 0) {
    out.count = total / static_cast<uint64_t>(newSize);
    return out;
  }
  return NS_ERROR(Code::kInvalidArgument,
                  "a buffer of {} x {} = {} elements divides neither into {} blocks nor as "
                  "Megatron pads it (a multiple of lcm({}, 128) = {})",
                  count, oldSize, total, newSize, oldSize, oldPad);
}

Result<DataParallelScaler> DataParallelScaler::create(const trace::TraceSet& traces, const JobShape& shape, int newDp) {
  if (newDp < 1)
    return NS_ERROR(Code::kInvalidArgument, "--dp {}: the new data-parallel size must be at least 1", newDp);
  RankLayout to = shape.layout;
  if (newDp % to.ep != 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "--dp {}: the expert-parallel size EP={} must divide the data-parallel "
                    "size (expert groups are blocks of the data-parallel group)",
                    newDp, to.ep);
  }
  to.dp = newDp;
  const int64_t world = static_cast<int64_t>(to.tp) * to.pp * newDp;
  if (world > (1 << 20))
    return NS_ERROR(Code::kInvalidArgument, "--dp {}: {} ranks is more than 1,048,576", newDp, world);
  to.world = static_cast<int>(world);
  DataParallelScaler scaler(traces, shape, to);
  Status status = scaler.assignRoles();
  if (status.ok()) status = scaler.checkOps();
  if (!status.ok()) return status;
  return scaler;
}

int DataParallelScaler::templateRank(int rank) const {
  const RankLayout& from = shape_.layout;
  return from.rankOf(to_.ppIndex(rank), to_.dpIndex(rank) % from.dp, to_.tpIndex(rank));
}

Status DataParallelScaler::assignRoles() {
  roles_.resize(traces_->files.size());
  size_t dropped = 0;
  for (size_t rank = 0; rank < traces_->files.size(); ++rank) {
    int instances[kNumGroupKinds] = {};
    int singles = 0;
    for (const trace::CommEntry& entry : traces_->files[rank].comms) {
      const uint64_t id = entry.record.commId;
      if (!isCommEvent(entry.record.event) || roles_[rank].count(id)) continue;
      const ShapedComm& comm = shape_.comms.at(id);
      CommRole role;
      if (comm.members.size() == 1) {
        role.single = true;
        role.instance = singles++;
      } else if (comm.fitted) {
        role.kind = comm.kind;
        role.instance = instances[static_cast<int>(comm.kind)]++;
      } else {
        ++dropped;  // carries no ops (the shape fits every communicator that does)
        continue;
      }
      roles_[rank].emplace(id, role);
    }
  }
  if (dropped) {
    notes_.push_back(
        fmt::format("{} communicator records of groups that carry no ops and are no group of the "
                    "layout are left out",
                    dropped));
  }
  return Status();
}

Status DataParallelScaler::checkOps() {
  const RankLayout& from = shape_.layout;
  uint64_t padded = 0, exact = 0, within = 0, tasks = 0;
  for (size_t rank = 0; rank < traces_->files.size(); ++rank) {
    if (from.dpIndex(static_cast<int>(rank)) >= to_.dp) continue;  // a replica the smaller job leaves out
    const trace::TraceFile& file = traces_->files[rank];
    tasks += file.tasks.size() + file.proxies.size();
    for (const trace::OpEntry& entry : file.ops) {
      const trace::OpRecord& op = entry.record;
      if (op.commId == 0) continue;  // ncclGroupStart / End
      auto role = roles_[rank].find(op.commId);
      auto where = [&] { return fmt::format("{}:{}: {}", file.path, entry.line, trace::opName(op.op)); };
      if (role == roles_[rank].end()) {
        return NS_ERROR(Code::kInvalidArgument, "{}: on a communicator this rank's file never created", where());
      }
      const CommRole& r = role->second;
      if (r.single || keepsItsOps(r.kind)) continue;
      const int newSize = to_.groupSize(r.kind);
      const char* group = r.kind == GroupKind::kDp     ? "data-parallel group"
                          : r.kind == GroupKind::kDpEp ? "expert-data-parallel group"
                                                       : "group of every rank";
      if (op.root >= newSize) {
        return NS_ERROR(Code::kInvalidArgument, "{}: root {} is beyond the {} of {} ranks", where(), op.root, group,
                        newSize);
      }
      if (isWholeBuffer(op.op) || (r.kind == GroupKind::kWorld && op.op == trace::OpCode::kAllGather)) continue;
      if (r.kind == GroupKind::kWorld || !isSharded(op.op)) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{} on a {}: no data-parallel scaling rule covers it (allreduce, "
                        "broadcast and reduce keep their buffer; reduce-scatter and all-gather "
                        "shard it)",
                        where(), group);
      }
      Result<ShardCount> shard = resizeShard(op.count, op.nranks, newSize);
      if (!shard.ok())
        return NS_ERROR(Code::kInvalidArgument, "{} of count {}: {}", where(), op.count, shard.status().message());
      ++(shard->megatronPadding ? padded : exact);
      within = std::max(within, shard->withinElements);
    }
  }
  if (padded) {
    notes_.push_back(within == 0 ? fmt::format("{} sharded ops: buffers padded as Megatron pads them (lcm(DP, 128) "
                                               "elements); counts exact",
                                               padded)
                                 : fmt::format("{} sharded ops: buffers padded as Megatron pads them; a count may be "
                                               "off by fewer than {} elements of the whole buffer (lcm({}, 128) "
                                               "does not divide lcm({}, 128))",
                                               padded, within, shape_.layout.dp, to_.dp));  // the data-parallel sizes
  }
  if (exact) notes_.push_back(fmt::format("{} sharded ops divided exactly by {}", exact, to_.dp));
  if (to_.dp < shape_.layout.dp) {
    notes_.push_back(
        fmt::format("data-parallel replicas {}..{} of the capture are left out", to_.dp, shape_.layout.dp - 1));
  }
  if (tasks) {
    notes_.push_back(
        fmt::format("{} nccl_task / nccl_proxy records (NCCL's decisions at the captured size) are "
                    "not carried: NCCL decides anew at the new size",
                    tasks));
  }
  return Status();
}

uint64_t DataParallelScaler::newCommId(const CommRole& role, int rank) const {
  if (role.single) return commIdFor(fmt::format("single#{}", role.instance), {rank});
  return commIdFor(fmt::format("{}#{}", groupKindLabel(role.kind), role.instance), to_.groupMembers(role.kind, rank));
}

void DataParallelScaler::scaleOp(trace::OpRecord* op, const CommRole& role, int rank) const {
  if (role.single) return;
  const std::vector<int> members = to_.groupMembers(role.kind, rank);
  const int newSize = static_cast<int>(members.size());
  if ((role.kind == GroupKind::kDp || role.kind == GroupKind::kDpEp) && isSharded(op->op)) {
    Result<ShardCount> shard = resizeShard(op->count, op->nranks, newSize);  // checked in checkOps
    if (shard.ok()) op->count = shard->count;
  }
  op->rank = static_cast<int32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
  op->nranks = newSize;
}

trace::TraceFile DataParallelScaler::rank(int rank, bool withOps) const {
  const int source = templateRank(rank);
  const trace::TraceFile& in = traces_->files[source];
  const std::map<uint64_t, CommRole>& roles = roles_[source];
  trace::TraceFile out;
  out.path = fmt::format("{} as rank {} of DP={}", in.path, rank, to_.dp);
  out.header = in.header;
  out.header.globalRank = rank;
  // Comm, op and step lines in the template's recording order (its `n`), renumbered from 0; the
  // job's step marks stay between the same calls.
  size_t c = 0, o = 0, s = 0;
  uint64_t n = 0;
  const auto stepsBefore = [&](uint64_t original) {
    for (; s < in.steps.size() && in.steps[s].n < original; ++s) {
      trace::StepEntry step = in.steps[s];
      step.n = n++;
      out.steps.push_back(step);
    }
  };
  while (c < in.comms.size() || o < in.ops.size()) {
    const bool takeComm = o == in.ops.size() || (c < in.comms.size() && in.comms[c].n < in.ops[o].n);
    stepsBefore(takeComm ? in.comms[c].n : in.ops[o].n);
    if (takeComm) {
      const trace::CommEntry& entry = in.comms[c++];
      auto role = roles.find(entry.record.commId);
      if (role == roles.end()) continue;
      trace::CommEntry copy = entry;
      trace::CommRecord& record = copy.record;
      const std::vector<int> members =
          role->second.single ? std::vector<int>{rank} : to_.groupMembers(role->second.kind, rank);
      if (record.event == trace::CommEvent::kSplit) record.event = trace::CommEvent::kInit;
      record.commId = newCommId(role->second, rank);
      record.parentId = 0;
      record.splitSeq = 0;
      record.color = 0;
      record.key = 0;
      record.nranks = static_cast<int32_t>(members.size());
      record.rank = static_cast<int32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
      record.globalRank = rank;
      copy.n = n++;
      out.comms.push_back(copy);
    } else {
      if (!withOps) {
        ++o;
        ++n;
        continue;
      }
      trace::OpEntry copy = in.ops[o++];
      if (copy.record.commId != 0) {
        const CommRole& role = roles.at(copy.record.commId);
        copy.record.commId = newCommId(role, rank);
        scaleOp(&copy.record, role, rank);
        copy.record.bytes =
            trace::traceBytes(copy.record.op, copy.record.count, copy.record.datatype, copy.record.nranks);
      }
      copy.n = n++;
      out.ops.push_back(copy);
    }
  }
  stepsBefore(UINT64_MAX);
  out.ncclEnv = in.ncclEnv;  // the job's NCCL settings travel with the resized job
  out.ncclEnvLeftOut = in.ncclEnvLeftOut;
  out.hasFooter = in.hasFooter;
  out.footer = in.footer;
  out.footer.globalRank = rank;
  out.footer.comms = out.comms.size();
  out.footer.ops = out.ops.size();
  out.footer.steps = out.steps.size();
  out.footer.records = out.comms.size() + out.ops.size() + out.steps.size();  // as the recorder counts
  out.footer.tasks = 0;
  out.footer.proxies = 0;
  out.footer.dropped = 0;
  out.endsWithFooter = in.hasFooter;
  return out;
}

Result<Workload> loadResizedTraceWorkload(const std::string& path, int newDp, const ShapeOptions& shapeOptions,
                                          int onlyRank, std::vector<std::string>* notes) {
  NS_ASSIGN_OR_RETURN(trace::TraceSet captured, trace::readTracePath(path));
  NS_ASSIGN_OR_RETURN(JobShape shape, recoverJobShape(captured, shapeOptions));
  NS_ASSIGN_OR_RETURN(DataParallelScaler scaler, DataParallelScaler::create(captured, shape, newDp));
  if (notes) {
    notes->push_back(
        fmt::format("--resize dp={}: the trace's {} replayed as {}", newDp, shape.toString(), shapeText(scaler.to())));
    for (const std::string& note : scaler.notes()) notes->push_back("--resize: " + note);
  }
  trace::TraceSet resized;
  resized.files.reserve(scaler.to().world);
  for (int rank = 0; rank < scaler.to().world; ++rank) {
    resized.files.push_back(scaler.rank(rank, onlyRank < 0 || rank == onlyRank));
  }
  NS_ASSIGN_OR_RETURN(Workload workload, workloadFromTraceSet(std::move(resized), nullptr, onlyRank));
  workload.description =
      fmt::format("ncclshim trace: {} ranks, {} communicators ({}: captured as {}, resized to {})", workload.worldSize,
                  workload.comms.size(), path, shape.toString(), sizesText(scaler.to()));
  return workload;
}

}  // namespace nshim::workload
