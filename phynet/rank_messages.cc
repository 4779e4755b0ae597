// Distinct lines with the ranks that said them, and their packing for MPI (rank_messages.h).
#include "phynet/rank_messages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "common/rank_ranges.h"

namespace nshim::phynet {

std::vector<std::string> mergeRankMessages(const std::vector<std::vector<std::string>>& perRank) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<int>> ranks;
  for (size_t r = 0; r < perRank.size(); ++r) {
    for (const std::string& line : perRank[r]) {
      std::vector<int>& who = ranks[line];
      if (who.empty()) order.push_back(line);
      if (who.empty() || who.back() != static_cast<int>(r)) who.push_back(static_cast<int>(r));
    }
  }
  std::vector<std::string> out;
  for (const std::string& line : order) {
    const std::vector<int>& who = ranks[line];
    out.push_back(who.size() == 1 ? fmt::format("{} (on rank {})", line, who[0])
                                  : fmt::format("{} (on {} ranks: {})", line, who.size(), rankRangesText(who)));
  }
  return out;
}

std::vector<std::vector<int>> ranksWithEqualText(const std::vector<std::string>& perRank) {
  std::vector<std::vector<int>> groups;
  std::map<std::string, size_t> groupOf;
  for (size_t r = 0; r < perRank.size(); ++r) {
    auto [at, added] = groupOf.try_emplace(perRank[r], groups.size());
    if (added) groups.emplace_back();
    groups[at->second].push_back(static_cast<int>(r));
  }
  return groups;
}

std::vector<int64_t> packLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + '\n';
  std::vector<int64_t> words(1 + (text.size() + 7) / 8, 0);
  words[0] = static_cast<int64_t>(text.size());
  if (!text.empty()) std::memcpy(words.data() + 1, text.data(), text.size());
  return words;
}

std::vector<std::string> unpackLines(const std::vector<int64_t>& words) {
  std::vector<std::string> lines;
  if (words.empty() || words[0] < 0) return lines;
  const size_t bytes = std::min(static_cast<size_t>(words[0]), (words.size() - 1) * 8);
  std::string text(bytes, '\0');
  if (bytes > 0) std::memcpy(text.data(), words.data() + 1, bytes);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace nshim::phynet
