// Rank lists as people read them at scale: "0-3,8,10-11" instead of one entry per rank.
#pragma once

#include <string>
#include <vector>

namespace nshim {

// Sorted, duplicates dropped, consecutive runs joined with '-'; "" for none.
std::string rankRangesText(std::vector<int> ranks);

}  // namespace nshim
