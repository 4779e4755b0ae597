// Scaling, filtering, fingerprinting and naming of workloads.
#include "workload/workload_transform.h"

#include <algorithm>
#include <cmath>

#include "trace/trace_record.h"
#include "trace/trace_validate.h"

namespace nshim::workload {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

class Hasher {
 public:
  template <typename T>
  void add(const T& value) {
    hash_ = trace::fnv1a64(&value, sizeof(value), hash_);
  }
  void add(const std::string& text) {
    add(text.size());
    hash_ = trace::fnv1a64(text.data(), text.size(), hash_);
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace

void scaleWorkload(Workload& workload, double scale) {
  if (scale == 1.0) return;
  for (RankWork& rank : workload.ranks) {
    for (WorkOp& op : rank.ops) {
      const CommGroup* comm = workload.findComm(op.commId);
      int n = comm ? static_cast<int>(comm->members.size()) : 1;
      if (op.count > 0) {
        op.count = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(op.count) * scale)));
      }
      op.bytes = opBytes(op.kind, op.count, op.type, n);
    }
  }
}

size_t filterWorkload(Workload& workload, const std::vector<std::string>& ops, const std::vector<std::string>& groups) {
  if (ops.empty() && groups.empty()) return 0;
  size_t removed = 0;
  for (RankWork& rank : workload.ranks) {
    auto keep = [&](const WorkOp& op) {
      if (!ops.empty() && !contains(ops, reportOpName(op.kind))) return false;
      if (groups.empty()) return true;
      const CommGroup* comm = workload.findComm(op.commId);
      return comm && contains(groups, comm->label);
    };
    size_t before = rank.ops.size();
    rank.ops.erase(std::remove_if(rank.ops.begin(), rank.ops.end(), [&](const WorkOp& op) { return !keep(op); }),
                   rank.ops.end());
    removed += before - rank.ops.size();
  }
  return removed;
}

uint64_t workloadFingerprint(const Workload& workload) {
  Hasher h;
  h.add(workload.worldSize);
  for (const CommGroup& comm : workload.comms) {
    h.add(comm.id);
    h.add(comm.label);
    for (int m : comm.members) h.add(m);
  }
  // A rank that holds only its own ops (onlyRank) shares the communicators with the others; its
  // ops are compared by their digests (rank_validation.h).
  for (const RankWork& rank : workload.ranks) {
    if (workload.onlyRank >= 0) break;
    h.add(rank.globalRank);
    h.add(rank.ops.size());
    for (const WorkOp& op : rank.ops) {
      h.add(op.commId);
      h.add(op.seq);
      h.add(static_cast<int>(op.kind));
      h.add(op.count);
      h.add(static_cast<int>(op.type));
      h.add(static_cast<int>(op.reduce));
      h.add(op.root);
      h.add(op.peer);
      h.add(op.bytes);
      h.add(op.group);
      h.add(op.issueNs);
      h.add(op.computeNs);
    }
  }
  return h.value();
}

std::string describeOp(const WorkOp& op) {
  std::string text = fmt::format("{} count {} {}", opKindName(op.kind), op.count, dataTypeName(op.type));
  const CollectiveDescriptor& kind = describe(op.kind);
  if (kind.reduces) text += fmt::format(" {}", reduceKindName(op.reduce));
  if (kind.rooted) text += fmt::format(" root {}", op.root);
  if (kind.pointToPoint) text += fmt::format(" {} {}", op.kind == OpKind::kSend ? "to" : "from", op.peer);
  return text + fmt::format(" ({} bytes)", op.bytes);
}

std::string commName(const CommGroup& comm) {
  return fmt::format("{} ({})", trace::commIdText(comm.id), comm.label.empty() ? "?" : comm.label);
}

int commRankOf(const CommGroup& comm, int globalRank) {
  for (size_t r = 0; r < comm.members.size(); ++r) {
    if (comm.members[r] == globalRank) return static_cast<int>(r);
  }
  return -1;
}

}  // namespace nshim::workload
