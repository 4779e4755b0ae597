// Parsing of --delay (delay_spec.h).
#include "phynet/delay_spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace nshim::phynet {
namespace {

constexpr int64_t kMaxDelayUs = 3'600'000'000;  // an hour

// A whole non-negative number of at most `high`, or false.
bool parseWhole(const std::string& text, int64_t high, int64_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12) return false;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno != 0 || value > high) return false;
  *out = value;
  return true;
}

}  // namespace

Result<DelaySpec> parseDelaySpec(const std::string& text) {
  const std::string form = "--delay RANK[,RANK...]:MICROSECONDS[:EVERY]";
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3) {
    return NS_ERROR(Code::kInvalidArgument, "--delay: '{}' is not {}", text, form);
  }
  DelaySpec spec;
  size_t from = 0;
  while (from <= parts[0].size()) {
    const size_t comma = std::min(parts[0].find(',', from), parts[0].size());
    const std::string word = parts[0].substr(from, comma - from);
    int64_t rank = 0;
    if (!parseWhole(word, 1 << 24, &rank)) {
      return NS_ERROR(Code::kInvalidArgument, "--delay: rank '{}' of '{}' is not a global rank ({})", word, text, form);
    }
    spec.ranks.push_back(static_cast<int>(rank));
    from = comma + 1;
  }
  std::sort(spec.ranks.begin(), spec.ranks.end());
  spec.ranks.erase(std::unique(spec.ranks.begin(), spec.ranks.end()), spec.ranks.end());
  int64_t us = 0;
  if (!parseWhole(parts[1], kMaxDelayUs, &us) || us == 0) {
    return NS_ERROR(Code::kInvalidArgument, "--delay: '{}' of '{}' is not a number of microseconds from 1 to {} ({})",
                    parts[1], text, kMaxDelayUs, form);
  }
  spec.ns = us * 1000;
  if (parts.size() == 3) {
    int64_t every = 0;
    if (!parseWhole(parts[2], int64_t{1} << 40, &every) || every == 0) {
      return NS_ERROR(Code::kInvalidArgument, "--delay: EVERY '{}' of '{}' is not a whole number from 1 ({})",
                      parts[2], text, form);
    }
    spec.every = static_cast<uint64_t>(every);
  }
  return spec;
}

RankDelay delayOfRank(const DelaySpec& spec, int rank) {
  if (!std::binary_search(spec.ranks.begin(), spec.ranks.end(), rank)) return {};
  return RankDelay{spec.ns, spec.every};
}

Status checkDelayRanks(const DelaySpec& spec, int worldSize) {
  for (int rank : spec.ranks) {
    if (rank >= worldSize) {
      return NS_ERROR(Code::kInvalidArgument, "--delay: rank {} is not one of the {} ranks (0..{})", rank, worldSize,
                      worldSize - 1);
    }
  }
  return Status::Ok();
}

}  // namespace nshim::phynet
