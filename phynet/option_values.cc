// The values of phynet's options (option_values.h).
#include "phynet/option_values.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "common/command_line.h"
#include "common/env.h"

namespace nshim::phynet {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(start, comma - start);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!word.empty()) out.push_back(word);
    start = comma + 1;
  }
  return out;
}

double parseNumber(const std::string& name, const std::string& text, double low, double high) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= low && value <= high)) {
    refuseValue(fmt::format("{}: '{}' is not a number in [{}, {}]", name, text, low, high));
  }
  return value;
}

int parseInt(const std::string& name, const std::string& text, int low, int high) {
  const double value = parseNumber(name, text, low, high);
  if (value != static_cast<double>(static_cast<int>(value))) {
    refuseValue(fmt::format("{}: '{}' is not an integer", name, text));
  }
  return static_cast<int>(value);
}

void parseDelay(const std::string& value, ReplayOptions* o) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos)
    refuseValue(fmt::format("--delay: '{}' (RANK[,RANK...]:MICROSECONDS[:EVERY])", value));
  o->delayRanks.clear();
  for (const std::string& word : splitList(value.substr(0, colon))) {
    o->delayRanks.push_back(parseInt("--delay rank", word, 0, 1 << 24));
  }
  if (o->delayRanks.empty()) refuseValue(fmt::format("--delay: '{}' names no rank", value));
  const std::string rest = value.substr(colon + 1);
  const size_t second = rest.find(':');
  o->delayMicroseconds = parseNumber("--delay microseconds", rest.substr(0, second), 1, 60e6);
  o->delayEvery = second == std::string::npos ? 1 : parseInt("--delay every", rest.substr(second + 1), 1, 1 << 30);
}

int64_t parseSize(const std::string& name, const std::string& value, const char* accepted) {
  const int64_t bytes = parseBytes(value);
  if (bytes < 4096) refuseValue(fmt::format("{}: '{}' ({})", name, value, accepted));
  return bytes;
}

}  // namespace nshim::phynet
