// Messages of many ranks said once: every rank's lines (e.g. the warnings of loading the workload,
// which every rank reads) are gathered to rank 0 and each distinct line is printed once with the
// ranks that said it, "... (on 32 ranks: 0-31)". Also the packing that carries a rank's lines in
// MpiSession::gatherToRoot's int64 vectors, and the grouping of ranks whose report lines are equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nshim::phynet {

// Each distinct line once, in order of first appearance (rank 0's lines first), followed by
// " (on rank R)" or " (on N ranks: R1-R2,R3)" (common/rank_ranges.h).
std::vector<std::string> mergeRankMessages(const std::vector<std::vector<std::string>>& perRank);

// Ranks grouped by equal text (one text per rank): groups in order of their lowest rank, ranks
// ascending (the report's per-rank counts, one line per group).
std::vector<std::vector<int>> ranksWithEqualText(const std::vector<std::string>& perRank);

// Lines (without '\n') to words and back: the byte count, then the bytes 8 to a word.
std::vector<int64_t> packLines(const std::vector<std::string>& lines);
std::vector<std::string> unpackLines(const std::vector<int64_t>& words);

}  // namespace nshim::phynet
