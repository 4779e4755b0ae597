// Workload helpers: names, sizes, lookups.
#include "workload/workload.h"

#include <fmt/format.h>

namespace nshim::workload {

std::string skippedText(const std::vector<SkippedRows>& skipped) {
  std::string text;
  for (const SkippedRows& s : skipped) {
    text += fmt::format("{}{} {} row{} on {} {} (first {})", text.empty() ? "" : "; ", s.rows, opKindName(s.kind),
                        s.rows == 1 ? "" : "s", s.group, s.why, s.firstSource);
  }
  return text;
}

const char* opKindName(OpKind kind) { return describe(kind).name; }

const char* opOriginName(OpOrigin origin) { return origin == OpOrigin::kAllToAllV ? "alltoallv" : ""; }

const char* recordedClockName(RecordedClock clock) {
  switch (clock) {
    case RecordedClock::kNone: return "none";
    case RecordedClock::kGpu: return "gpu";
    case RecordedClock::kCpuCall: return "cpu_call";
    case RecordedClock::kMixed: return "mixed";
    case RecordedClock::kFile: return "file";
  }
  return "none";
}

const char* reportOpName(OpKind kind) {
  const CollectiveDescriptor& d = describe(kind);
  return d.pointToPoint ? d.ncclTestsName : d.name;
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
  // Saturates instead of wrapping: the readers refuse such sizes, and a saturated figure can never
  // pass for a small one in a check or a report.
  uint64_t elementBytes = 0;
  uint64_t total = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(dataTypeSize(type)), &elementBytes) ||
      __builtin_mul_overflow(elementBytes, static_cast<uint64_t>(sizeBlocks(describe(kind), nranks)), &total)) {
    return UINT64_MAX;
  }
  return total;
}

}  // namespace nshim::workload
