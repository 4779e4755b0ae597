// Rank lists as ranges: the listed ranks, and the ranks missing from a world computed from the gaps
// (a file claiming a rank in the hundreds of millions must not cost a list of that many ranks).
#include "common/rank_ranges.h"

#include <string>
#include <vector>

#include "tests/catch.h"

namespace nshim {
namespace {

TEST_CASE("rank ranges: runs joined, duplicates dropped", "[common]") {
  CHECK(rankRangesText({}) == "");
  CHECK(rankRangesText({8, 0, 1, 2, 3, 10, 11, 3}) == "0-3,8,10-11");
}

TEST_CASE("rank ranges: the ranks missing from a world, from the gaps", "[common]") {
  int64_t missing = -1;
  CHECK(missingRankRangesText({0, 1, 2, 3}, 4, &missing) == "");
  CHECK(missing == 0);
  CHECK(missingRankRangesText({3, 1, 1}, 6, &missing) == "0,2,4-5");
  CHECK(missing == 4);
  CHECK(missingRankRangesText({}, 3, &missing) == "0-2");
  CHECK(missing == 3);
  // A rank outside the world is not present in it; a huge world stays two numbers.
  CHECK(missingRankRangesText({-1, 0, 576067128}, 576067129, &missing) == "1-576067127");
  CHECK(missing == 576067127);
}

}  // namespace
}  // namespace nshim
