// The parallel layout of a captured job recovered from its trace: which of the job's communicators
// are tensor, data, expert, expert-data, pipeline and whole-world groups, and the sizes TP x DP x PP
// (EP dividing DP) over the ranks (Megatron's order, rank_layout.h: TP contiguous, DP strided by TP,
// EP a block of the DP group, expert-data the rest of it, PP outermost).
//
// A communicator's members are what every trace holds (each member's `comm` line names its rank in
// it and its global rank), so the shape is read from members alone: every layout TP x DP x PP with
// EP | DP is tried, and it fits when every communicator that carries ops on two or more ranks is,
// member for member and in rank order, one group of that layout. A pipeline group carries only
// sends and receives. Where one communicator matches several kinds (an EP group equal to the DP
// group), its ops decide: one that exchanges (all-to-all, sends) is expert or pipeline parallel, one
// that only reduces or gathers is tensor, data or world first. A layout with EP > 1 counts only when
// an exchanging communicator is one of its expert groups (one that is not an even ring: uneven
// counts, or sends to itself). Context parallelism (Megatron's tp-cp-dp-pp, EP = 1): a layout with
// CP > 1 counts only when a communicator of even exchanges (a ring of sends, an all-to-all) is one
// of its CP groups, so an even all-to-all may be CP or EP and a ring CP or PP: refused with the
// candidates unless --cp (or --ep / --pp) chooses. Among fitting layouts the one with the
// most exchanging communicators as expert or pipeline groups wins, then the one with the most groups
// of every rank as its data-parallel group (unless --tp / --pp say otherwise), then the smallest EP. Layouts still tied are an
// ambiguity, refused with the candidates unless --tp / --pp / --ep / --cp choose; a communicator that fits
// no layout is refused by name.
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
  bool carriesOps = false;  // some member issued an op on it
  bool fitted = false;      // kind is meaningful (a communicator without ops may fit nothing)
};

struct JobShape {
  RankLayout layout;                     // world, tp, dp, ep, pp
  std::map<uint64_t, ShapedComm> comms;  // every communicator of the trace, by id
  std::vector<std::string> notes;        // how the shape was chosen
  std::string toString() const;          // "TP=2 DP=2 PP=1 (4 ranks)"; "EP=2" after DP, "CP=2" after TP
};

// "TP=2 DP=4 PP=1" ("TP=1 DP=4 EP=2 PP=1" with experts, "TP=1 CP=2 DP=2 PP=1" with context
// parallelism), and with " (8 ranks)".
std::string sizesText(const RankLayout& layout);
std::string shapeText(const RankLayout& layout);

struct ShapeOptions {
  int tp = 0;  // fixed sizes; 0: searched
  int pp = 0;
  int ep = 0;
  int cp = 0;
};

// What the shape is read from: one communicator, and how it was used.
struct CommUse {
  uint64_t id = 0;
  std::vector<int> members;  // global ranks in communicator-rank order
  bool carriesOps = false;
  bool pointToPointOnly = true;  // every op on it is a send or a receive (vacuously true without ops)
  bool exchanges = false;        // some op on it is an all-to-all, a send or a receive
  bool evenExchange = true;      // every send and all-to-all on it moves the same count
  bool sendsToSelf = false;      // some send on it addresses the sender itself (an all-to-all's own block)
};

// The shape of a job of `world` ranks with these communicators, or an error naming what does not fit.
Result<JobShape> recoverJobShape(int world, const std::vector<CommUse>& comms, const ShapeOptions& options = {});
// The same from `traces` (one file per global rank 0..N-1).
Result<JobShape> recoverJobShape(const trace::TraceSet& traces, const ShapeOptions& options = {});

}  // namespace nshim::workload
