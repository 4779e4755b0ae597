// Building diff views from traces, workloads and reports (rules in diff_view.h).
#include "tools/inspect/diff_view.h"

#include <algorithm>
#include <map>

#include "trace/trace_format.h"
#include "workload/rank_layout.h"

namespace nshim::tools {
namespace {

bool isReducing(const std::string& op) { return op == "allreduce" || op == "reduce" || op == "reducescatter"; }

// The FORMAT.md name of an engine datatype name ("float" -> "float32"), or the text unchanged.
std::string traceTypeName(const std::string& engineName) {
  for (int t = 0; t < trace::kNumDatatypes; ++t) {
    if (engineName == dataTypeName(static_cast<DataType>(t))) return trace::datatypeName(t);
  }
  return engineName;
}

// Keeps the communicators that carry ops (in their order) and renumbers the ops' comm indices.
void dropUnusedComms(DiffSide& side) {
  std::vector<size_t> used(side.comms.size(), 0);
  for (const auto& rank : side.ranks) {
    for (const DiffOp& op : rank) used[op.comm] = 1;
  }
  std::vector<size_t> newIndex(side.comms.size());
  std::vector<DiffComm> kept;
  for (size_t i = 0; i < side.comms.size(); ++i) {
    newIndex[i] = kept.size();
    if (used[i]) kept.push_back(std::move(side.comms[i]));
  }
  side.comms = std::move(kept);
  for (auto& rank : side.ranks) {
    for (DiffOp& op : rank) op.comm = newIndex[op.comm];
  }
}

}  // namespace

const char* diffFieldName(int field) {
  static const char* kNames[kNumDiffFields] = {"op",   "count",  "dtype", "redop", "root",
                                               "peer", "nranks", "bytes", "result"};
  return field >= 0 && field < kNumDiffFields ? kNames[field] : "?";
}

size_t DiffSide::opCount() const {
  size_t total = 0;
  for (const auto& rank : ranks) total += rank.size();
  return total;
}

std::string describeDiffOp(const DiffOp& op) {
  std::string out = op.fields[kFieldOp];
  for (int f = kFieldCount; f < kNumDiffFields; ++f) {
    const std::string& value = op.fields[f];
    if (value.empty() || value == "-1" || value == "none" || (f == kFieldResult && value == "0")) continue;
    if (f == kFieldDtype || f == kFieldRedop) out += " " + value;
    else out += fmt::format(" {} {}", diffFieldName(f), value);
  }
  return out;
}

DiffSide diffSideFromTrace(const TraceView& view, const std::string& name) {
  DiffSide side;
  side.name = name;
  side.kind = "trace";
  side.worldSize = view.worldSize;
  side.notes = view.notes;
  for (const workload::CommGroup& c : view.comms) side.comms.push_back(DiffComm{c.id, c.members, c.label});
  side.ranks.resize(view.worldSize);
  std::map<uint64_t, size_t> index = view.commIndex;
  for (size_t i = 0; i < view.set.files.size(); ++i) {
    const trace::TraceFile& file = view.set.files[i];
    std::string base(workload::baseName(file.path));
    for (const trace::OpEntry* entry : opsInOrder(file)) {
      const trace::OpRecord& r = entry->record;
      if (r.op == trace::OpCode::kGroupStart || r.op == trace::OpCode::kGroupEnd) continue;
      auto it = index.find(r.commId);
      if (it == index.end()) {  // an op on a communicator no file creates: compared by id only
        side.comms.push_back(DiffComm{r.commId, {}, "unknown"});
        it = index.emplace(r.commId, side.comms.size() - 1).first;
      }
      DiffOp op;
      op.comm = it->second;
      op.seq = r.seq;
      op.fields = {trace::opName(r.op),
                   std::to_string(r.count),
                   trace::datatypeName(r.datatype),
                   trace::redopName(r.redop, (r.flags & trace::kOpFlagPreMulSum) != 0),
                   std::to_string(r.root),
                   std::to_string(r.peer),
                   std::to_string(r.nranks),
                   std::to_string(r.bytes),
                   std::to_string(r.result)};
      op.where = fmt::format("{}:{}", base, entry->line);
      side.ranks[view.fileRank[i]].push_back(std::move(op));
    }
  }
  dropUnusedComms(side);
  return side;
}

DiffSide diffSideFromWorkload(const workload::Workload& workload, const std::string& name, const std::string& kind) {
  DiffSide side;
  side.name = name;
  side.kind = kind;
  side.worldSize = workload.worldSize;
  std::map<uint64_t, size_t> index;
  for (const workload::CommGroup& c : workload.comms) {
    index[c.id] = side.comms.size();
    side.comms.push_back(DiffComm{c.id, c.members, c.label});
  }
  side.ranks.resize(workload.worldSize);
  for (const workload::RankWork& rank : workload.ranks) {
    for (const workload::WorkOp& w : rank.ops) {
      DiffOp op;
      op.comm = index.at(w.commId);
      op.seq = w.seq;
      const std::string kind = workload::opKindName(w.kind);
      op.fields = {kind,
                   std::to_string(w.count),
                   trace::datatypeName(static_cast<int>(w.type)),
                   isReducing(kind) ? reduceKindName(w.reduce) : "none",
                   std::to_string(w.root),
                   std::to_string(w.peer),
                   std::to_string(side.comms[op.comm].members.size()),
                   std::to_string(w.bytes),
                   "0"};
      op.where = w.source.str();
      side.ranks[rank.globalRank].push_back(std::move(op));
    }
  }
  dropUnusedComms(side);
  return side;
}

DiffSide reportView(const DiffSide& side) {
  DiffSide out = side;
  for (size_t g = 0; g < side.ranks.size(); ++g) {
    out.ranks[g].clear();
    for (const DiffOp& op : side.ranks[g]) {
      const DiffComm& comm = side.comms[op.comm];
      const std::string& kind = op.fields[kFieldOp];
      const bool first = !comm.members.empty() && comm.members[0] == static_cast<int>(g);
      if (kind == "recv" || (kind != "send" && !first)) continue;
      DiffOp kept = op;
      if (kind == "send") kept.fields[kFieldOp] = "sendrecv";
      else kept.fields[kFieldPeer] = "";
      kept.fields[kFieldRedop] = kept.fields[kFieldRoot] = kept.fields[kFieldResult] = "";
      out.ranks[g].push_back(std::move(kept));
    }
  }
  return out;
}

DiffSide diffSideFromReport(const ReplayReportCsv& report, const DiffSide& reference, int iteration) {
  DiffSide side;
  side.name = report.path;
  side.kind = "report";
  side.worldSize = reference.worldSize;
  side.comms = reference.comms;
  side.ranks.resize(reference.worldSize);
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < side.comms.size(); ++i) index[side.comms[i].id] = i;
  std::map<uint64_t, size_t> unknown;  // rows per communicator the reference lacks
  std::vector<const ReportRow*> rows;
  for (const ReportRow& r : report.rows) {
    if (r.iteration == iteration) rows.push_back(&r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (const ReportRow* r : rows) {
    auto it = index.find(r->comm);
    if (it == index.end()) {
      ++unknown[r->comm];
      continue;
    }
    const std::vector<int>& members = side.comms[it->second].members;
    const bool p2p = r->op == "sendrecv";
    int rank = p2p ? r->sender : (members.empty() ? -1 : members[0]);
    if (rank < 0 || rank >= side.worldSize) continue;
    DiffOp op;
    op.comm = it->second;
    op.seq = r->seq;
    std::string peer;
    if (p2p) {
      auto at = std::find(members.begin(), members.end(), r->receiver);
      peer = at == members.end() ? fmt::format("global {}", r->receiver) : std::to_string(at - members.begin());
    }
    op.fields = {r->op, std::to_string(r->count),  traceTypeName(r->type),   "", "",
                 peer,  std::to_string(r->nranks), std::to_string(r->bytes), ""};
    op.where = fmt::format("{}:{}", workload::baseName(report.path), r->line);
    side.ranks[rank].push_back(std::move(op));
  }
  for (const auto& [id, n] : unknown) {
    side.notes.push_back(fmt::format("{} report row(s) on communicator {:#018x}, which the other input lacks", n, id));
  }
  if (rows.empty()) side.notes.push_back(fmt::format("the report has no rows of iteration {}", iteration));
  return side;
}

}  // namespace nshim::tools
