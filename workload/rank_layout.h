// The TP/DP/EP/PP layout of a training job over its global ranks, and the builder that expands a
// per-group operation list (SimAI workload text, AICB CSV) into per-rank WorkOps on deterministic
// communicators. Shared by simai_workload.cc and aicb_workload.cc.
//
// Layout (world = TP * DP * PP, Megatron's order "tp-dp-pp", which AICB uses and SimAI uses for PP=1):
//   rank = pp_idx * (TP*DP) + dp_idx * TP + tp_idx
//   With context parallelism (CP > 1; recovered from traces, job_shape.h) Megatron's "tp-cp-dp-pp":
//   rank = pp_idx * (TP*CP*DP) + dp_idx * (TP*CP) + cp_idx * TP + tp_idx; a CP group is the CP ranks
//   strided by TP, a DP group the ranks of one cp_idx strided by TP*CP, and DP_CP (the gradients'
//   group under CP) the DP x CP ranks of one tp_idx. Expert groups are not laid out with CP > 1.
//   * PP stages are contiguous blocks of world/PP ranks. SimAI builds no PP groups (its PP is modelled
//     analytically), so for PP > 1 this follows AICB/Megatron, where the pipeline is outermost.
//   * TP groups: TP contiguous ranks (same stage, same dp_idx).
//   * DP groups: ranks with the same stage and tp_idx, strided by TP (as SimAI does).
//   * EP groups (EP divides DP): EP consecutive members of the DP group, i.e. dp_idx in
//     [b*EP, b*EP+EP) with b = dp_idx / EP. Equals SimAI's MockNcclGroup and AICB's 'ep' group.
//   * DP_EP groups: the DP members with the same dp_idx % EP (DP/EP ranks), the gradient group of the
//     experts; SimAI's DP_EP and AICB's ep_dp_group.
//   * EP_TP (AICB ep_tp_group): the TP x EP block of an EP group, TP innermost.
//   * PP: the ranks with the same (dp_idx, tp_idx) in every stage, in stage order.
//   * EMBEDDING: the first and the last stage of a PP group (Megatron's embedding group).
//   * WORLD: all ranks.
// Example TP=2 DP=4 EP=2 PP=1: TP {0,1}{2,3}{4,5}{6,7}; DP {0,2,4,6}{1,3,5,7}; EP {0,2}{4,6}{1,3}{5,7};
// DP_EP {0,4}{2,6}{1,5}{3,7}.
//
// Communicator ids: FNV-1a 64 of the label and the member list (members in communicator-rank order),
// so the same file gives the same ids on every rank and every run.
//
// Message sizes (nccl-tests convention, §4): the bytes of a file are the op's whole buffer. Allreduce,
// broadcast, reduce, send, recv: count = bytes / 4 as float32 when bytes % 4 == 0, else count = bytes as
// uint8. Allgather, reducescatter, alltoall: per-rank count = bytes / (4 * n) as float32 when divisible,
// else ceil(bytes / n) as uint8 (the size is rounded up to a multiple of n).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

enum class GroupKind { kTp, kDp, kEp, kDpEp, kEpTp, kPp, kEmbedding, kWorld, kCp, kDpCp };
constexpr int kNumGroupKinds = 10;
// "tp", "dp", "ep", "dp_ep", "ep_tp", "pp", "embedding", "world", "cp", "dp_cp"
const char* groupKindLabel(GroupKind kind);

struct RankLayout {
  int world = 1;
  int tp = 1;
  int dp = 1;
  int ep = 1;
  int pp = 1;
  int cp = 1;

  int stageSize() const { return tp * cp * dp; }
  int tpIndex(int rank) const { return rank % stageSize() % tp; }
  int cpIndex(int rank) const { return rank % stageSize() / tp % cp; }
  int dpIndex(int rank) const { return rank % stageSize() / (tp * cp); }
  int ppIndex(int rank) const { return rank / stageSize(); }
  int rankOf(int ppIdx, int dpIdx, int tpIdx, int cpIdx = 0) const {
    return ppIdx * stageSize() + dpIdx * tp * cp + cpIdx * tp + tpIdx;
  }

  // The group of `kind` that contains `rank`, in communicator-rank order. Requires problem() == "".
  std::vector<int> groupMembers(GroupKind kind, int rank) const;
  // Whether `rank` takes part in groups of `kind`: always, except middle stages for kEmbedding.
  bool inGroup(GroupKind kind, int rank) const {
    return kind != GroupKind::kEmbedding || ppIndex(rank) == 0 || ppIndex(rank) == pp - 1;
  }
  int groupSize(GroupKind kind) const;
  // "" when the sizes are positive, TP*CP*DP*PP == world, EP divides DP (and is 1 with CP > 1); else
  // what is wrong.
  std::string problem() const;
  std::string toString() const;  // "TP=2 DP=4 EP=2 PP=1 (8 ranks)"; "CP=2 " after TP when CP > 1
};

uint64_t commIdFor(std::string_view label, const std::vector<int>& members);

struct OpSize {
  uint64_t count = 0;
  DataType type = DataType::kFloat32;
  uint64_t bytes = 0;  // nccl-tests size actually moved (rounded up for uint8 blocks)
};
OpSize sizeOp(OpKind kind, uint64_t bytes, int nranks);
// Rounded to the nearest byte; saturates at 2^63 (checkOpSize refuses anything near it first).
uint64_t scaleBytes(double bytes, double scale);
// A message size read from a file (`text` as written, `bytes` its value): times `scale` it must be
// at most kMaxOpBytes (1 PiB), the largest op phynet replays. Beyond (1e18, 2^63, 1e300, which no
// integer type holds) it is an error "file:line: field: ..." naming the --scale that would fit,
// whether or not the row would be replayed.
Status checkOpSize(const std::string& file, int line, std::string_view field, std::string_view text, double bytes,
                   double scale);
// A time from a file (already in ns) rounded to whole ns and clamped to [0, INT64_MAX]: files are
// not trusted, and std::llround of a value beyond int64 is unspecified.
int64_t roundNs(double ns);

// What a file line asks of one rank; the builder adds communicator, sequence, size and compute gap.
struct OpRequest {
  OpKind kind = OpKind::kAllReduce;
  uint64_t bytes = 0;  // whole buffer, already scaled
  int root = -1;       // communicator rank (broadcast, reduce)
  int peer = -1;       // communicator rank (send, recv)
  int64_t recordedNs = -1;
  int group = 0;      // non-zero: issued in one NCCL group with the rank's other ops of this id
  SourceLine source;  // "file:line"
};

class WorkloadBuilder {
 public:
  // onlyRank >= 0: only that rank's ops are stored (Workload::onlyRank); every rank's ops are still
  // expanded, so communicators, sequence numbers, skipped rows and size errors are the whole world's.
  // opSink set: every op goes there and none is stored (WorkloadOptions::opSink).
  explicit WorkloadBuilder(const RankLayout& layout, int onlyRank = -1,
                           std::function<void(int, const WorkOp&, const CommGroup&)> opSink = {});

  const RankLayout& layout() const { return layout_; }
  // Compute time `rank` spends before its next op.
  // Saturates at INT64_MAX (ns >= 0, from roundNs).
  void addCompute(int rank, int64_t ns) {
    pendingNs_[rank] = ns > INT64_MAX - pendingNs_[rank] ? INT64_MAX : pendingNs_[rank] + ns;
  }
  // Appends the op to `rank` on its group of `kind`. Ops on a single-member group or of zero bytes
  // move no data and are dropped (and counted by source line, for Workload::skipped), as are ops
  // of a group the rank is not in (embedding, middle stages): their compute time stays pending for
  // the rank's next op. Returns whether an op was appended.
  bool addOp(int rank, GroupKind kind, const OpRequest& request);
  // Ops appended so far (all ranks).
  uint64_t opCount() const { return opCount_; }
  // The workload, or an error naming the first line (lowest line number) with an op larger than
  // phynet replays (kMaxOpBytes), so that a loaded workload always passes checkWorkload's size rule.
  Result<Workload> finish(std::string description);

 private:
  int commIndex(GroupKind kind, int rank);
  void countSkipped(const char* why, GroupKind kind, const OpRequest& request);

  RankLayout layout_;
  int onlyRank_ = -1;
  std::function<void(int, const WorkOp&, const CommGroup&)> opSink_;
  std::vector<CommGroup> comms_;
  std::array<std::vector<int>, kNumGroupKinds> commOfRank_;    // index into comms_, -1: not built
  std::array<std::vector<uint64_t>, kNumGroupKinds> nextSeq_;  // per kind, per rank
  std::vector<int64_t> pendingNs_;
  std::vector<RankWork> ranks_;
  uint64_t opCount_ = 0;
  struct TooLarge {
    SourceLine source;
    OpKind kind = OpKind::kAllReduce;
    uint64_t bytes = 0;
  };
  std::optional<TooLarge> tooLarge_;  // the op of the lowest line beyond kMaxOpBytes
  struct SkippedSources {
    std::unordered_set<uint64_t> sources;  // distinct "file:line" (SourceLine::key)
    SourceLine first;
  };
  std::map<std::tuple<std::string, int, int>, SkippedSources> skipped_;  // by (why, op kind, group kind)
};

// --- helpers shared by the text readers ---

Result<std::string> readTextFile(const std::string& path);
// The error of a bad input: "file:line: field: problem" ("file: field: problem" for line <= 0).
Status inputError(const std::string& file, int line, std::string_view field, const std::string& problem);
// Text as editors and spreadsheet tools save it: a UTF-8 byte order mark is dropped and CR-only line
// ends (old Mac "CSV") become LF, in `storage` when a copy is needed (splitLines drops the CR of
// CRLF itself). UTF-16 text is refused by name rather than read as garbage.
Result<std::string_view> asPlainText(std::string_view text, const std::string& file, std::string* storage);

struct TextLine {
  int number = 0;           // 1-based
  std::string_view text;    // without the newline (and without a '\r' before it)
  bool terminated = false;  // a newline followed it (an unterminated short last line is a cut file)
};
std::vector<TextLine> splitLines(std::string_view text);
bool isBlank(std::string_view text);
std::string_view baseName(std::string_view path);
// A finite number >= 0 (integer or decimal, as the files write them); false otherwise.
bool parseNonNegative(std::string_view text, double* out);
// A decimal integer (sign allowed); false otherwise.
bool parseInt(std::string_view text, int64_t* out);
// "text" quoted and shortened for error messages.
std::string quoted(std::string_view text);

}  // namespace nshim::workload
