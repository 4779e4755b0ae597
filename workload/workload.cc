// Workload helpers: names, sizes, lookups.
#include "workload/workload.h"

#include <fmt/format.h>

namespace nshim::phynet {

std::string skippedText(const std::vector<SkippedRows>& skipped) {
  std::string text;
  for (const SkippedRows& s : skipped) {
    text += fmt::format("{}{} {} row{} on {} {} (first {})", text.empty() ? "" : "; ", s.rows, opKindName(s.kind),
                        s.rows == 1 ? "" : "s", s.group, s.why, s.firstSource);
  }
  return text;
}

const char* opKindName(OpKind kind) {
  static const char* kNames[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                 "alltoall",  "gather",    "scatter",       "send",      "recv"};
  return kNames[static_cast<int>(kind)];
}

const CommGroup* Workload::findComm(uint64_t id) const {
  auto it = commIndex.find(id);
  if (it != commIndex.end() && it->second < comms.size() && comms[it->second].id == id) return &comms[it->second];
  for (const CommGroup& comm : comms) {
    if (comm.id == id) return &comm;
  }
  return nullptr;
}

void Workload::indexComms() {
  commIndex.clear();
  commIndex.reserve(comms.size());
  for (size_t i = 0; i < comms.size(); ++i) commIndex.emplace(comms[i].id, i);
}

uint64_t opBytes(OpKind kind, uint64_t count, DataType type, int nranks) {
  uint64_t bytes = count * dataTypeSize(type);
  switch (kind) {
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll:
    case OpKind::kGather:
    case OpKind::kScatter: return bytes * static_cast<uint64_t>(nranks);
    default: return bytes;
  }
}

}  // namespace nshim::phynet
