// The parallel layout of a captured job recovered from its trace: which of the job's communicators
// are tensor, data, pipeline and whole-world groups, and the sizes TP x DP x PP over the ranks
// (Megatron's order, rank_layout.h: TP contiguous, DP strided by TP, PP outermost).
//
// A communicator's members are what every trace holds (each member's `comm` line names its rank in
// it and its global rank), so the shape is read from members alone: every layout TP x DP x PP of the
// world is tried, and it fits when every communicator that carries ops on two or more ranks is,
// member for member and in rank order, one group of that layout. A pipeline group must carry only
// sends and receives; a group of every rank is data parallel (a "world" group when TP x PP > 1).
// Several fitting layouts are an ambiguity, refused with the candidates unless --tp / --pp choose;
// a communicator that fits no layout is refused by name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"
#include "workload/rank_layout.h"

namespace nshim::workload {

struct ShapedComm {
  uint64_t id = 0;
  std::vector<int> members;  // global ranks in communicator-rank order
  GroupKind kind = GroupKind::kWorld;
  bool carriesOps = false;   // some member issued an op on it
  bool fitted = false;       // kind is meaningful (a communicator without ops may fit nothing)
};

struct JobShape {
  RankLayout layout;                     // world, tp, dp, pp (ep = 1)
  std::map<uint64_t, ShapedComm> comms;  // every communicator of the trace, by id
  std::vector<std::string> notes;        // how the shape was chosen
  std::string toString() const;          // "TP=2 DP=2 PP=1 (4 ranks)"
};

struct ShapeOptions {
  int tp = 0;  // fixed sizes; 0: searched
  int pp = 0;
};

// What the shape is read from: one communicator, and how it was used.
struct CommUse {
  uint64_t id = 0;
  std::vector<int> members;  // global ranks in communicator-rank order
  bool carriesOps = false;
  bool pointToPointOnly = true;  // every op on it is a send or a receive (vacuously true without ops)
};

// The shape of a job of `world` ranks with these communicators, or an error naming what does not fit.
Result<JobShape> recoverJobShape(int world, const std::vector<CommUse>& comms, const ShapeOptions& options = {});
// The same from `traces` (one file per global rank 0..N-1).
Result<JobShape> recoverJobShape(const trace::TraceSet& traces, const ShapeOptions& options = {});

}  // namespace nshim::workload
