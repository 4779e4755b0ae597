// Rank lists as people read them at scale: "0-3,8,10-11" instead of one entry per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nshim {

// Sorted, duplicates dropped, consecutive runs joined with '-'; "" for none.
std::string rankRangesText(std::vector<int> ranks);

// The ranks of [0, world) that are not in `present`, as rankRangesText writes them, computed from
// the gaps between the present ranks (a file claiming rank 576,067,128 costs no list of 576 million
// ranks); *missing is their number.
std::string missingRankRangesText(std::vector<int> present, int world, int64_t* missing);

}  // namespace nshim
