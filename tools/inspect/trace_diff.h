// Comparing two diff views (diff_view.h) op by op, per rank and per communicator.
//
// Communicators are matched by their members (global ranks in communicator-rank order) and, among
// communicators with the same members, by creation order: ids differ between two runs of the same
// job (they hash a random unique id), so ids are not compared. With `matchById` (a report against
// its trace, which share ids) they are matched by id. A communicator that carries ops on one side
// only is a divergence.
//
// Ops: for each rank and matched communicator, an op of one side is paired with the op of the same
// sequence number on the other and compared field by field (op, count, dtype, redop, root, peer,
// nranks, bytes, result; a field one side does not know is skipped; the first differing field
// names the divergence); an op without a partner is a divergence of field "op" with the value
// "(none)" on the side that lacks it. Divergences are listed by rank, then in the issue order of the
// first input (then the second input's unpaired ops); the first of them is "the first divergence".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/inspect/diff_view.h"

namespace nshim::tools {

struct Divergence {
  int rank = -1;     // global rank; -1 for a whole-input difference
  std::string comm;  // "0x... (tp, 2 ranks)"; "" for a whole-input difference
  bool hasSeq = false;
  uint64_t seq = 0;      // the first input's seq (the second's when the first has no op)
  std::string field;     // diffFieldName, or "ranks" / "communicator"
  std::string a, b;      // the two values
  std::string opA, opB;  // the two ops, described, with file:line ("" when absent)
};

struct DiffOptions {
  size_t maxListed = 10;
  bool matchById = false;
};

struct DiffResult {
  size_t comparedOps = 0;  // op pairs compared
  size_t matchedComms = 0;
  size_t total = 0;                // divergences found (ops that differ + missing ops + comm / rank issues)
  std::vector<Divergence> listed;  // the first maxListed
  bool same() const { return total == 0; }
};

DiffResult compareSides(const DiffSide& a, const DiffSide& b, const DiffOptions& options);

// The text report: both inputs, then "same" or the first divergence and the listed ones.
void printDiff(FILE* out, const DiffSide& a, const DiffSide& b, const DiffResult& result, const DiffOptions& options);

}  // namespace nshim::tools
