// A captured job at another data-parallel size (weak scaling: every replica keeps its micro-batches,
// so what one replica does is unchanged and only the data-parallel groups change size). Rules,
// stated in docs/scale.md:
//   * rank r' of the new job (TP x N x PP, Megatron's order) does what captured rank
//     (pp, dp' mod DP, tp) did, op for op, on the groups of the same kind and creation order;
//   * tensor, pipeline, expert (EP) and expert-tensor groups, and one-rank communicators, keep their
//     ops byte for byte (EP stays: it must divide N); expert-data-parallel groups grow to N / EP and
//     follow the data-parallel rules;
//   * on a data-parallel group, allreduce / broadcast / reduce keep their count (the whole buffer);
//     reduce-scatter / all-gather of a sharded buffer divide the buffer by the new size, padded as
//     Megatron pads it (to a multiple of lcm(DP, 128): exact when lcm(DP, 128) divides lcm(N, 128),
//     else within lcm(DP, 128) elements of the buffer, said), or exactly when the buffer is not so
//     padded and N divides it;
//   * on a group of every rank (when TP x PP > 1), allreduce / broadcast / reduce keep their count
//     and all-gather its per-rank block;
//   * anything else on a resized group (all-to-all, sends, a buffer that does not divide, a root
//     beyond the new size) is refused, naming the file, line and op.
// Ranks are produced one at a time, so a job of thousands of ranks is written in flat memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"
#include "workload/job_shape.h"
#include "workload/workload.h"

namespace nshim::workload {

class DataParallelScaler {
 public:
  // Checks every op of `traces` against the rules for `newDp`; `traces` must outlive the scaler.
  static Result<DataParallelScaler> create(const trace::TraceSet& traces, const JobShape& shape, int newDp);

  const JobShape& from() const { return shape_; }
  const RankLayout& to() const { return to_; }
  // What the rules decided that a reader should know (padding, what was left out).
  const std::vector<std::string>& notes() const { return notes_; }
  // The trace of rank `rank` (0 <= rank < to().world) of the scaled job; without its op records
  // when `withOps` is false (a replay rank needs every rank's communicators, but only its own ops).
  trace::TraceFile rank(int rank, bool withOps = true) const;

 private:
  struct CommRole {
    GroupKind kind = GroupKind::kWorld;
    int instance = 0;     // its place among the template rank's communicators of that kind
    bool single = false;  // a communicator of one rank: kept as it is
  };
  DataParallelScaler(const trace::TraceSet& traces, JobShape shape, RankLayout to)
      : traces_(&traces), shape_(std::move(shape)), to_(to) {}
  Status assignRoles();
  Status checkOps();
  int templateRank(int rank) const;
  uint64_t newCommId(const CommRole& role, int rank) const;
  void scaleOp(trace::OpRecord* op, const CommRole& role, int rank) const;

  const trace::TraceSet* traces_;
  JobShape shape_;
  RankLayout to_;
  std::vector<std::map<uint64_t, CommRole>> roles_;  // per captured rank: its communicators' roles
  std::vector<std::string> notes_;
};

// Megatron's sharded-buffer rule: the per-rank count of a reduce-scatter / all-gather over `newSize`
// ranks of the buffer that was `count` per rank over `oldSize`. Error when no rule applies.
struct ShardCount {
  uint64_t count = 0;
  bool megatronPadding = false;  // the buffer was padded to a multiple of lcm(oldSize, 128)
  uint64_t withinElements = 0;   // 0: exact; else the new buffer may be off by fewer elements
};
Result<ShardCount> resizeShard(uint64_t count, int oldSize, int newSize);

// The trace at `path` as a replay workload at data-parallel size `newDp` (phynet --resize dp=N):
// onlyRank >= 0 keeps only that rank's ops, so memory per rank does not grow with the new size
// beyond every rank's communicator records. `notes` receives the shapes and what the rules decided.
Result<Workload> loadResizedTraceWorkload(const std::string& path, int newDp, const ShapeOptions& shapeOptions,
                                          int onlyRank, std::vector<std::string>* notes);

}  // namespace nshim::workload
