// Tally and summary line of the connections a bootstrap listener ignored.
#include "transport/bootstrap/stranger_tally.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace nshim {

void StrangerTally::note(const std::string& source, StrangerReason reason, std::string_view detail) {
  ++total_;
  auto found = bySource_.find(source);
  if (found != bySource_.end()) {
    ++found->second;
  } else if (bySource_.size() < kMaxSources) {
    bySource_.emplace(source, 1);
  } else {
    ++otherSources_;
  }
  size_t index = static_cast<size_t>(reason);
  if (byReason_[index]++ == 0) example_[index] = std::string(detail.substr(0, 200));
}

static_assert(static_cast<size_t>(StrangerReason::kCount) == 6, "a text for each reason below");

std::string StrangerTally::summary(double helloTimeoutSeconds) const {
  constexpr size_t kShownSources = 5;
  std::vector<std::pair<std::string, size_t>> sources(bySource_.begin(), bySource_.end());
  std::stable_sort(sources.begin(), sources.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string from;
  size_t unshownSources = 0, unshownCount = otherSources_;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (i < kShownSources) {
      from += fmt::format("{}{}: {}", i ? ", " : "", sources[i].first, sources[i].second);
    } else {
      ++unshownSources;
      unshownCount += sources[i].second;
    }
  }
  if (otherSources_ > 0) ++unshownSources;  // at least one more
  if (unshownCount > 0) {
    from +=
        fmt::format(", {} from {}{} more sources", unshownCount, otherSources_ > 0 ? "at least " : "", unshownSources);
  }
  const std::array<std::string, static_cast<size_t>(StrangerReason::kCount)> reasonText = {
      fmt::format("sent no hello within {:g} s", helloTimeoutSeconds),
      "closed before a whole hello",
      "closed to make room (too many connections waiting from their source or in all)",
      "not a bootstrap hello",
      "with a wrong secret",
      "still silent when the bootstrap ended",
  };
  std::string why;
  for (size_t i = 0; i < byReason_.size(); ++i) {
    if (byReason_[i] == 0) continue;
    why += fmt::format("{}{} {}", why.empty() ? "" : ", ", byReason_[i], reasonText[i]);
    if (!example_[i].empty()) why += fmt::format(" ({}{})", byReason_[i] > 1 ? "first: " : "", example_[i]);
  }
  return fmt::format("ignored {} connection{} without the job's secret (from {}): {}", total_, total_ == 1 ? "" : "s",
                     from, why);
}

}  // namespace nshim
