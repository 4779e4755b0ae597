// A captured job at another data-parallel size (weak scaling: every replica keeps its micro-batches,
// so what one replica does is unchanged and only the data-parallel groups change size). Rules,
// stated in docs/scale.md:
//   * rank r' of the new job (TP x CP x N x PP, Megatron's order) does what captured rank
//     (pp, dp' mod DP, cp, tp) did, op for op, on the groups of the same kind and creation order;
//   * tensor, context (CP), pipeline, expert (EP) and expert-tensor groups, and one-rank
//     communicators, keep their ops byte for byte; data-and-context groups (DP x CP) follow the
//     data-parallel rules at N x CP ranks (EP stays: it must divide N); expert-data-parallel groups grow to N / EP and
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
// At another expert-parallel size EP' (--ep, alone or with --dp; EP' | N, and EP, EP' dividing one
// another): the expert groups' token all-to-alls follow expert ownership (expert_exchange.h), their
// all-gathers (tokens per expert) keep the per-rank block, an even all-to-all moves count x EP / EP'
// per peer; expert-data-parallel buffers (the experts' gradients) are EP / EP' as large (whole
// buffers exactly or refused; sharded ones padded as above, within a bound that is said).
// Ranks are produced one at a time, so a job of thousands of ranks is written in flat memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"
#include "workload/expert_exchange.h"
#include "workload/job_shape.h"
#include "workload/workload.h"

namespace nshim::workload {

// A buffer's new size as a share of its old one (num / den).
struct BufferShare {
  int num = 1, den = 1;
};

class DataParallelScaler {
 public:
  // Checks every op of `traces` against the rules for `newDp` and `newEp` (0: as captured);
  // `traces` must outlive the scaler.
  static Result<DataParallelScaler> create(const trace::TraceSet& traces, const JobShape& shape, int newDp,
                                           int newEp = 0);

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
  bool expertsChange() const { return to_.ep != shape_.layout.ep; }
  bool keepsItsOps(GroupKind kind) const;
  BufferShare bufferShare(GroupKind kind) const;
  Status checkExpertOp(const trace::OpRecord& op, GroupKind kind, const std::string& where);
  // The ops that replace `op` (a send or receive on an expert group when EP changes: several or none).
  void expandExchange(const trace::OpEntry& entry, const CommRole& role, int rank, uint64_t ordinal,
                      std::vector<trace::OpEntry>* out) const;

  const trace::TraceSet* traces_;
  JobShape shape_;
  RankLayout to_;
  std::vector<std::map<uint64_t, CommRole>> roles_;  // per captured rank: its communicators' roles
  std::vector<std::string> notes_;
  std::optional<ExpertExchange> exchange_;  // when EP changes
};

// Megatron's sharded-buffer rule: the per-rank count of a reduce-scatter / all-gather over `newSize`
// ranks of the buffer that was `count` per rank over `oldSize`, and that is now `share` (num / den) of
// its size (the experts' share of a rank when EP changes). Error when no rule applies.
struct ShardCount {
  uint64_t count = 0;
  bool megatronPadding = false;  // the buffer was padded to a multiple of lcm(oldSize, 128)
  uint64_t withinElements = 0;   // 0: exact; else the new buffer may be off by fewer elements
};
Result<ShardCount> resizeShard(uint64_t count, int oldSize, int newSize, BufferShare share = {});

// The trace at `path` as a replay workload at data-parallel size `newDp` (phynet --resize dp=N):
// onlyRank >= 0 keeps only that rank's ops, so memory per rank does not grow with the new size
// beyond every rank's communicator records. `notes` receives the shapes and what the rules decided.
// newEp > 0: at that expert-parallel size as well (newDp 0: the captured data-parallel size).
Result<Workload> loadResizedTraceWorkload(const std::string& path, int newDp, int newEp,
                                          const ShapeOptions& shapeOptions, int onlyRank,
                                          std::vector<std::string>* notes);
// "dp=8", "ep=4", "dp=8,ep=4" (0: not given), as --resize takes it.
std::string resizeText(int newDp, int newEp);

}  // namespace nshim::workload
