// Scaling a captured job by data parallelism (dp_scale.h).
#include "workload/dp_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "trace/trace_format.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

constexpr uint64_t kMegatronPadding = 128;  // Megatron pads a sharded buffer to lcm(DP, 128) elements

bool isWholeBuffer(trace::OpCode op) {
  return op == trace::OpCode::kAllReduce || op == trace::OpCode::kBroadcast || op == trace::OpCode::kReduce;
}
bool isSharded(trace::OpCode op) { return op == trace::OpCode::kReduceScatter || op == trace::OpCode::kAllGather; }
bool isExpertGroup(GroupKind kind) { return kind == GroupKind::kEp || kind == GroupKind::kEpTp; }
bool isPointToPoint(trace::OpCode op) { return op == trace::OpCode::kSend || op == trace::OpCode::kRecv; }
bool isCommEvent(trace::CommEvent event) {
  return event == trace::CommEvent::kInit || event == trace::CommEvent::kSplit;
}

}  // namespace

std::string resizeText(int newDp, int newEp) {
  std::string text = newDp > 0 ? fmt::format("dp={}", newDp) : "";
  if (newEp > 0) text += fmt::format("{}ep={}", text.empty() ? "" : ",", newEp);
  return text;
}

Result<ShardCount> resizeShard(uint64_t count, int oldSize, int newSize, BufferShare share) {
  const uint64_t total = count * static_cast<uint64_t>(oldSize);
  const uint64_t num = static_cast<uint64_t>(share.num), den = static_cast<uint64_t>(share.den);
  if ((count != 0 && total / static_cast<uint64_t>(oldSize) != count) || (total != 0 && total * num / num != total)) {
    return NS_ERROR(Code::kInvalidArgument, "count overflows");
  }
  const uint64_t oldPad = std::lcm(static_cast<uint64_t>(oldSize), kMegatronPadding);
  const uint64_t newPad = std::lcm(static_cast<uint64_t>(newSize), kMegatronPadding);
  const uint64_t shared = (total * num + den - 1) / den;  // the buffer's new size, rounded up
  ShardCount out;
  if (total % oldPad == 0) {
    out.megatronPadding = true;
    out.count = (shared + newPad - 1) / newPad * newPad / static_cast<uint64_t>(newSize);
    // The unpadded buffer lies in (total - oldPad, total]: padding it to newPad gives this exactly
    // when oldPad divides newPad, else a value at most oldPad below. A share of it (num / den) lies
    // within oldPad x num / den, padded within newPad more.
    if (num == den) out.withinElements = newPad % oldPad == 0 ? 0 : oldPad;
    else out.withinElements = (oldPad * num + den - 1) / den + newPad;
    return out;
  }
  if ((total * num) % den == 0 && shared % static_cast<uint64_t>(newSize) == 0) {
    out.count = shared / static_cast<uint64_t>(newSize);
    return out;
  }
  return NS_ERROR(Code::kInvalidArgument,
                  "a buffer of {} x {} = {} elements{} divides neither into {} blocks nor as "
                  "Megatron pads it (a multiple of lcm({}, 128) = {})",
                  count, oldSize, total, num == den ? "" : fmt::format(" times {} / {}", num, den), newSize, oldSize,
                  oldPad);
}

Result<DataParallelScaler> DataParallelScaler::create(const trace::TraceSet& traces, const JobShape& shape, int newDp,
                                                      int newEp) {
  if (newDp == 0) newDp = shape.layout.dp;
  if (newDp < 1)
    return NS_ERROR(Code::kInvalidArgument, "--dp {}: the new data-parallel size must be at least 1", newDp);
  if (newEp < 0) {
    return NS_ERROR(Code::kInvalidArgument, "--ep {}: the new expert-parallel size must be at least 1", newEp);
  }
  RankLayout to = shape.layout;
  if (newEp > 0 && newEp != to.ep) {
    if (to.ep == 1) {
      return NS_ERROR(Code::kInvalidArgument,
                      "--ep {}: the capture has no expert groups (EP=1), so its token "
                      "exchanges were never recorded",
                      newEp);
    }
    if (newEp % to.ep != 0 && to.ep % newEp != 0) {
      return NS_ERROR(Code::kInvalidArgument,
                      "--ep {}: the captured EP={} and {} do not divide one another (one "
                      "rank's experts would be split unevenly over the new expert groups)",
                      newEp, to.ep, newEp);
    }
    to.ep = newEp;
  }
  if (newDp % to.ep != 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "--dp {}{}: the expert-parallel size EP={} must divide the data-parallel "
                    "size DP={} (expert groups are blocks of the data-parallel group)",
                    newDp, newEp > 0 ? fmt::format(" --ep {}", newEp) : "", to.ep, newDp);
  }
  to.dp = newDp;
  const int64_t world = static_cast<int64_t>(to.tp) * to.cp * to.pp * newDp;
  if (world > (1 << 20))
    return NS_ERROR(Code::kInvalidArgument, "--dp {}: {} ranks is more than 1,048,576", newDp, world);
  to.world = static_cast<int>(world);
  DataParallelScaler scaler(traces, shape, to);
  Status status = scaler.assignRoles();
  if (status.ok()) status = scaler.checkOps();
  if (!status.ok()) return status;
  if (scaler.expertsChange()) {
    std::vector<std::map<uint64_t, int>> expertComms(traces.files.size());
    for (size_t rank = 0; rank < traces.files.size(); ++rank) {
      for (const auto& [id, role] : scaler.roles_[rank]) {
        if (!role.single && role.kind == GroupKind::kEp) expertComms[rank][id] = role.instance;
      }
    }
    Result<ExpertExchange> exchange = ExpertExchange::create(traces, expertComms, shape.layout.ep, to.ep);
    if (!exchange.ok()) return exchange.status();
    scaler.exchange_.emplace(std::move(*exchange));
    const std::string how =
        to.ep > shape.layout.ep
            ? fmt::format("{} of the captured sends did not divide by {} and are spread to within one element",
                          scaler.exchange_->unevenSplits(), to.ep / shape.layout.ep)
            : fmt::format("the sends to the {} old peers whose experts one rank now holds are merged (summed)",
                          shape.layout.ep / to.ep);
    scaler.notes_.push_back(
        fmt::format("token all-to-alls: experts keep their global order, {} per rank now; "
                    "every rank keeps its tokens (its send total); {}",
                    to.ep > shape.layout.ep ? "fewer" : "more", how));
  }
  return scaler;
}

int DataParallelScaler::templateRank(int rank) const {
  const RankLayout& from = shape_.layout;
  return from.rankOf(to_.ppIndex(rank), to_.dpIndex(rank) % from.dp, to_.tpIndex(rank), to_.cpIndex(rank));
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
      if (isExpertGroup(r.kind)) {
        NS_RETURN_IF_ERROR(checkExpertOp(op, r.kind, where()));
        continue;
      }
      const int newSize = to_.groupSize(r.kind);
      const char* group = r.kind == GroupKind::kDp     ? "data-parallel group"
                          : r.kind == GroupKind::kDpCp ? "data-and-context-parallel group"
                          : r.kind == GroupKind::kDpEp ? "expert-data-parallel group"
                                                       : "group of every rank";
      if (op.root >= newSize) {
        return NS_ERROR(Code::kInvalidArgument, "{}: root {} is beyond the {} of {} ranks", where(), op.root, group,
                        newSize);
      }
      if (r.kind == GroupKind::kDpEp && expertsChange() && isWholeBuffer(op.op) &&
          op.count * static_cast<uint64_t>(shape_.layout.ep) % static_cast<uint64_t>(to_.ep) != 0) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{} of count {} on an {}: the experts' buffer at EP={} would be {} x "
                        "{} / {} elements, not a whole number",
                        where(), op.count, group, to_.ep, op.count, shape_.layout.ep, to_.ep);
      }
      if (isWholeBuffer(op.op) || (r.kind == GroupKind::kWorld && op.op == trace::OpCode::kAllGather)) continue;
      if (r.kind == GroupKind::kWorld || !isSharded(op.op)) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{} on a {}: no data-parallel scaling rule covers it (allreduce, "
                        "broadcast and reduce keep their buffer; reduce-scatter and all-gather "
                        "shard it)",
                        where(), group);
      }
      Result<ShardCount> shard = resizeShard(op.count, op.nranks, newSize, bufferShare(r.kind));
      if (!shard.ok())
        return NS_ERROR(Code::kInvalidArgument, "{} of count {}: {}", where(), op.count, shard.status().message());
      ++(shard->megatronPadding ? padded : exact);
      within = std::max(within, shard->withinElements);
    }
  }
  if (padded) {
    notes_.push_back(within == 0
                         ? fmt::format("{} sharded ops: buffers padded as Megatron pads them (lcm(DP, 128) "
                                       "elements); counts exact",
                                       padded)
                         : fmt::format("{} sharded ops: buffers padded as Megatron pads them; a count may be "
                                       "off by fewer than {} elements of the whole buffer ({})",
                                       padded, within,
                                       expertsChange() ? fmt::format("the experts' buffers are EP {} / {} as large, "
                                                                     "their padding unknown",
                                                                     shape_.layout.ep, to_.ep)
                                                       : fmt::format("lcm({}, 128) does not divide lcm({}, 128)",
                                                                     shape_.layout.dp, to_.dp)));
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

bool DataParallelScaler::keepsItsOps(GroupKind kind) const {
  return kind == GroupKind::kTp || kind == GroupKind::kPp || kind == GroupKind::kCp ||
         (isExpertGroup(kind) && !expertsChange());
}

BufferShare DataParallelScaler::bufferShare(GroupKind kind) const {
  if (kind != GroupKind::kDpEp) return {};
  return BufferShare{shape_.layout.ep, to_.ep};  // the experts' buffers: E / EP experts per rank
}

// On an expert group at another EP: sends and receives follow expert ownership (checked by
// ExpertExchange), all-gathers (tokens per expert) keep their per-rank block, an even all-to-all
// moves count x EP / EP' per peer; nothing else has a rule.
Status DataParallelScaler::checkExpertOp(const trace::OpRecord& op, GroupKind kind, const std::string& where) {
  if (op.op == trace::OpCode::kAllGather) return Status();
  if (kind == GroupKind::kEp && isPointToPoint(op.op)) return Status();
  if (kind == GroupKind::kEp && op.op == trace::OpCode::kAlltoAll) {
    if (op.count * static_cast<uint64_t>(shape_.layout.ep) % static_cast<uint64_t>(to_.ep) == 0) return Status();
    return NS_ERROR(Code::kInvalidArgument,
                    "{} of count {} per peer: at EP={} a peer's block would be {} x {} / {} "
                    "elements, not a whole number",
                    where, op.count, to_.ep, op.count, shape_.layout.ep, to_.ep);
  }
  return NS_ERROR(Code::kInvalidArgument,
                  "{} on an {} group: no expert-parallel scaling rule covers it (sends and "
                  "receives of the token all-to-all, all-to-all and all-gather do)",
                  where, kind == GroupKind::kEp ? "expert" : "expert-tensor");
}

uint64_t DataParallelScaler::newCommId(const CommRole& role, int rank) const {
  if (role.single) return commIdFor(fmt::format("single#{}", role.instance), {rank});
  return commIdFor(fmt::format("{}#{}", groupKindLabel(role.kind), role.instance), to_.groupMembers(role.kind, rank));
}

void DataParallelScaler::scaleOp(trace::OpRecord* op, const CommRole& role, int rank) const {
  if (role.single) return;
  const std::vector<int> members = to_.groupMembers(role.kind, rank);
  const int newSize = static_cast<int>(members.size());
  const uint64_t oldEp = static_cast<uint64_t>(shape_.layout.ep), newEp = static_cast<uint64_t>(to_.ep);
  if ((role.kind == GroupKind::kDp || role.kind == GroupKind::kDpCp || role.kind == GroupKind::kDpEp) &&
      isSharded(op->op)) {
    Result<ShardCount> shard = resizeShard(op->count, op->nranks, newSize, bufferShare(role.kind));  // checked
    if (shard.ok()) op->count = shard->count;
  } else if (role.kind == GroupKind::kDpEp && isWholeBuffer(op->op)) {
    op->count = op->count * oldEp / newEp;  // exact: checked in checkOps
  } else if (role.kind == GroupKind::kEp && op->op == trace::OpCode::kAlltoAll) {
    op->count = op->count * oldEp / newEp;
  }
  op->rank = static_cast<int32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
  op->nranks = newSize;
}

void DataParallelScaler::expandExchange(const trace::OpEntry& entry, const CommRole& role, int rank, uint64_t ordinal,
                                        std::vector<trace::OpEntry>* out) const {
  const std::vector<int> members = to_.groupMembers(GroupKind::kEp, rank);
  std::vector<int> templates;
  for (int member : members) templates.push_back(templateRank(member));
  const int position = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
  const bool send = entry.record.op == trace::OpCode::kSend;
  for (const ExpertExchange::NewOp& part :
       exchange_->expand(send, role.instance, entry.record.peer, ordinal, position, templates)) {
    trace::OpEntry copy = entry;
    copy.record.commId = newCommId(role, rank);
    copy.record.peer = part.peer;
    copy.record.count = part.count;
    copy.record.rank = position;
    copy.record.nranks = static_cast<int32_t>(members.size());
    out->push_back(copy);
  }
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
  std::map<std::tuple<uint64_t, int, int>, uint64_t> ordinals;  // expert sends / receives by (comm, op, peer)
  std::map<uint64_t, uint64_t> nextSeq;                         // by new expert communicator
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
        if (exchange_ && !role.single && role.kind == GroupKind::kEp) {
          // The token all-to-all at the new EP: each send / receive becomes k, or merges (none).
          std::vector<trace::OpEntry> expanded;
          if (isPointToPoint(copy.record.op)) {
            const auto key = std::make_tuple(copy.record.commId, static_cast<int>(copy.record.op), copy.record.peer);
            expandExchange(copy, role, rank, ordinals[key]++, &expanded);
          } else {
            copy.record.commId = newCommId(role, rank);
            scaleOp(&copy.record, role, rank);
            expanded.push_back(copy);
          }
          for (trace::OpEntry& op : expanded) {
            op.record.seq = nextSeq[op.record.commId]++;
            op.record.bytes = trace::traceBytes(op.record.op, op.record.count, op.record.datatype, op.record.nranks);
            op.n = n++;
            out.ops.push_back(op);
          }
          continue;
        }
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

Result<Workload> loadResizedTraceWorkload(const std::string& path, int newDp, int newEp,
                                          const ShapeOptions& shapeOptions, int onlyRank,
                                          std::vector<std::string>* notes) {
  NS_ASSIGN_OR_RETURN(trace::TraceSet captured, trace::readTracePath(path));
  NS_ASSIGN_OR_RETURN(JobShape shape, recoverJobShape(captured, shapeOptions));
  NS_ASSIGN_OR_RETURN(DataParallelScaler scaler, DataParallelScaler::create(captured, shape, newDp, newEp));
  if (notes) {
    notes->push_back(fmt::format("--resize {}: the trace's {} replayed as {}", resizeText(newDp, newEp),
                                 shape.toString(), shapeText(scaler.to())));
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
