// Building the lenient trace view: ranks per file, communicators from their comm records.
#include "tools/inspect/trace_comms.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "workload/trace_workload.h"

namespace nshim::tools {

const workload::CommGroup* TraceView::findComm(uint64_t id) const {
  auto it = commIndex.find(id);
  return it == commIndex.end() ? nullptr : &comms[it->second];
}

int64_t TraceView::wallNs(size_t file, int64_t monotonicNs) const {
  const trace::TraceHeader& h = set.files[file].header;
  return monotonicNs - h.startMonotonicNs + h.startRealtimeNs;
}

std::vector<const trace::OpEntry*> opsInOrder(const trace::TraceFile& file) {
  std::vector<const trace::OpEntry*> entries;
  entries.reserve(file.ops.size());
  for (const trace::OpEntry& e : file.ops) entries.push_back(&e);
  std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->n < b->n; });
  return entries;
}

TraceView buildTraceView(trace::TraceSet set) {
  TraceView view;
  view.set = std::move(set);
  const size_t files = view.set.files.size();
  view.worldSize = static_cast<int>(files);
  std::set<int> seen;
  bool usable = true;
  for (const trace::TraceFile& f : view.set.files) {
    int g = f.globalRank();
    usable = usable && g >= 0 && g < view.worldSize && seen.insert(g).second;
  }
  for (size_t i = 0; i < files; ++i) view.fileRank.push_back(usable ? view.set.files[i].globalRank() : int(i));
  if (!usable) view.notes.push_back("the files' global ranks are missing or not 0..N-1: ranks are file positions");

  // Members by communicator id; the creation order key is (lowest member's rank, its record's n).
  struct Build {
    std::vector<int> members;
    std::tuple<int, uint64_t> order{1 << 30, 0};
  };
  std::map<uint64_t, Build> builds;
  for (size_t i = 0; i < files; ++i) {
    for (const trace::CommEntry& entry : view.set.files[i].comms) {
      const trace::CommRecord& r = entry.record;
      if (r.event != trace::CommEvent::kInit && r.event != trace::CommEvent::kSplit) continue;
      if (r.nranks <= 0 || r.rank < 0 || r.rank >= r.nranks) continue;
      if (static_cast<size_t>(r.nranks) > files) {  // every member has a file: not sized by this
        view.notes.push_back(
            fmt::format("{}:{}: field 'nranks': communicator {:#018x} declares {} ranks, but the "
                        "trace has {} files (one per rank): its record is left out",
                        view.set.files[i].path, entry.line, r.commId, r.nranks, files));
        continue;
      }
      Build& b = builds[r.commId];
      if (b.members.size() < static_cast<size_t>(r.nranks)) b.members.resize(r.nranks, -1);
      b.members[r.rank] = view.fileRank[i];
      b.order = std::min(b.order, std::tuple<int, uint64_t>{view.fileRank[i], entry.n});
    }
  }
  // Labels as phynet gives them (it numbers "comm<N>" in id order), then creation order.
  workload::Workload shapes;
  shapes.worldSize = view.worldSize;
  std::vector<std::tuple<int, uint64_t>> created;
  for (auto& [id, b] : builds) {
    if (std::count(b.members.begin(), b.members.end(), -1)) {
      view.notes.push_back(fmt::format("communicator {:#018x}: some members have no file", id));
    }
    shapes.comms.push_back(workload::CommGroup{id, std::move(b.members), ""});
    created.push_back(b.order);
  }
  workload::labelCommsByShape(shapes);
  std::vector<size_t> order(shapes.comms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&created](size_t x, size_t y) { return created[x] < created[y]; });
  for (size_t i : order) view.comms.push_back(std::move(shapes.comms[i]));
  for (size_t i = 0; i < view.comms.size(); ++i) view.commIndex[view.comms[i].id] = i;
  return view;
}

Result<TraceView> readTraceView(const std::string& path) {
  NS_ASSIGN_OR_RETURN(trace::TraceSet set, trace::readTracePath(path));
  return buildTraceView(std::move(set));
}

}  // namespace nshim::tools
