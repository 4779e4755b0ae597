// Recovering a training layout from a job's communicators, for writing it as a SimAI or AICB
// workload. Both formats describe ONE sequence of operations that every rank runs on its own
// groups of a TP x DP (x PP) layout (rank_layout.h: TP contiguous, DP strided by TP, EP a block of
// the DP group, DP_EP the rest of it), so a job maps only when
//   * every communicator that carries ops is, member for member and in rank order, one group kind
//     of a single layout (SimAI: TP, DP, EP, DP_EP; AICB also EP_TP, PP and the world), and
//   * every rank issues the same sequence of (op, group kind, bytes, root, peer).
// Layouts are tried for every TP dividing the world (PP for AICB, then EP dividing DP), or the sizes
// given. Among layouts that fit, the one whose group kinds agree with phynet's shape labels for the
// most communicators wins, then the smallest TP, PP, EP: a communicator of all ranks is data
// parallel unless --tp says otherwise. Ops on one-rank communicators move no data and are left out
// (phynet drops them from SimAI / AICB inputs as well). Anything else gives an error that names the
// communicator or the rank and op that does not fit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "workload/rank_layout.h"
#include "workload/workload.h"

namespace nshim::tools {

struct LayoutTarget {
  const char* format = "SimAI";            // for messages
  std::vector<workload::GroupKind> kinds;  // allowed group kinds, in order of preference
  std::vector<workload::OpKind> ops;       // allowed ops
  bool pipeline = false;                   // enumerate PP > 1
  bool anyBroadcastRoot = false;           // false: broadcast only from communicator rank 0
  int tp = 0, ep = 0, pp = 0;              // fixed sizes (0: try all)
};

LayoutTarget simAiTarget();
LayoutTarget aicbTarget();

struct JobOp {
  workload::OpKind kind = workload::OpKind::kAllReduce;
  workload::GroupKind group = workload::GroupKind::kTp;
  uint64_t bytes = 0;
  int root = -1;
  int64_t computeNs = 0;    // rank 0's gap before the op
  int64_t recordedNs = -1;  // rank 0's recorded duration
  std::string source;       // rank 0's file:line
};

struct InferredJob {
  workload::RankLayout layout;
  std::map<uint64_t, workload::GroupKind> kindOf;  // communicator id -> group kind
  std::vector<JobOp> ops;                          // the sequence every rank runs
  std::vector<std::string> notes;                  // what the format cannot carry
};

Result<InferredJob> inferJob(const workload::Workload& workload, const LayoutTarget& target);

}  // namespace nshim::tools
