// Per-rank NIC choice from a list (nic_list.h).
#include "transport/bootstrap/nic_list.h"

#include <string_view>

namespace nshim {

std::vector<std::string> nicListEntries(const std::string& list) {
  if (list.empty()) return {};
  if (list[0] == '^') return {list};
  std::string_view rest = list;
  const bool exact = rest[0] == '=';
  if (exact) rest.remove_prefix(1);
  std::vector<std::string> entries;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (!item.empty()) entries.push_back((exact ? "=" : "") + std::string(item));
  }
  if (entries.empty()) entries.push_back(list);
  return entries;
}

std::string nicForLocalRank(const std::string& list, int localRank) {
  std::vector<std::string> entries = nicListEntries(list);
  if (entries.empty()) return "";
  size_t index = localRank < 0 ? 0 : static_cast<size_t>(localRank) % entries.size();
  return entries[index];
}

}  // namespace nshim
