// Writing a job (layout_infer.h) as the foreign workload formats phynet reads (SimAI text, AICB CSV), so that
// phynet's readers expand it back to the same per-rank operations.
//
// SimAI text: policy HYBRID_TRANSFORMER_FWD_IN_BCKWD with the layout's TP, EP, world; pp 1. SimAI
// runs all layers' forward ops, then per layer in reverse its input-grad then weight-grad op, and
// puts unsuffixed input-grad ops on TP and unsuffixed weight-grad ops on DP. The writer leaves every
// forward column NONE and packs the sequence into (input-grad, weight-grad) pairs in order: a TP op
// takes an input-grad slot, a DP op a weight-grad slot, EP / DP_EP ops (suffix _EP / _DP_EP) either;
// each new pair is a new layer, and the layers are written last pair first. Each op's compute gap
// goes into the compute column before it. Count, datatype and reduction are not carried.
//
// AICB CSV: first one zero-byte all_reduce row per group kind (tp, dp, ep, pp) that fixes the
// layout's sizes (phynet drops zero-byte ops), then a `computation` row for each gap and one row per
// op: CommType.<op>, CommGroup.<group>, its size, msg_size = bytes, stage = the op's source, src =
// broadcast root, dst = reduce root. When the input has recorded times the file is a log: comm rows
// carry _elapsed_time in ms and computation rows in ms; otherwise computation rows are in ns.
#pragma once

#include <cstdio>

#include "tools/inspect/layout_infer.h"

namespace nshim::tools {

void writeSimAi(FILE* out, const InferredJob& job);
void writeAicb(FILE* out, const InferredJob& job);

}  // namespace nshim::tools
