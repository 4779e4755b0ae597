// Chakra process groups from a METADATA_NODE or from ASTRA-sim's comm-group JSON (chakra_groups.h).
#include "workload/chakra_groups.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace nshim::workload {
namespace {

// Sorted, distinct, each in [0, world).
Status checkMembers(std::vector<int>& members, const std::string& where, int world) {
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) {
    return NS_ERROR(Code::kInvalidArgument, "{} names a rank twice", where);
  }
  if (!members.empty() && (members.front() < 0 || members.back() >= world)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: rank {} is not one of the trace's {} ranks", where,
                    members.front() < 0 ? members.front() : members.back(), world);
  }
  return Status::Ok();
}

// A JSON list of ranks into `out`; false when it is not a list of integers in int range.
bool rankList(const nlohmann::json& list, std::vector<int>* out) {
  if (!list.is_array()) return false;
  for (const nlohmann::json& rank : list) {
    if (!rank.is_number_integer() || rank.get<int64_t>() < INT32_MIN || rank.get<int64_t>() > INT32_MAX) return false;
    out->push_back(static_cast<int>(rank.get<int64_t>()));
  }
  return true;
}

}  // namespace

Result<ChakraGroups> parseCommGroupJson(const std::string& text, const std::string& name, int world) {
  ChakraGroups groups;
  if (text.empty()) return groups;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: not a JSON object of group names to rank lists", name);
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    ChakraGroup g{it.key(), {}};
    const std::string where = fmt::format("{}: group '{}'", name, it.key());
    if (!rankList(it.value(), &g.members) || g.members.empty()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: expected a non-empty list of ranks", where);
    }
    NS_RETURN_IF_ERROR(checkMembers(g.members, where, world));
    groups.emplace(it.key(), std::move(g));
  }
  return groups;
}

Result<ChakraGroups> groupsFromMetadata(const std::vector<chakra::Node>& nodes, const std::string& name, int world) {
  ChakraGroups groups;
  for (const chakra::Node& node : nodes) {
    if (node.type() != chakra::METADATA_NODE || node.inputs().values().find("pg_name") == std::string::npos) continue;
    const std::string where = fmt::format("{}: node {} (METADATA_NODE): inputs.values", name, node.id());
    // ["<JSON text of the list>"]: the outer list holds the process groups' JSON as one string.
    nlohmann::json outer = nlohmann::json::parse(node.inputs().values(), nullptr, /*allow_exceptions=*/false);
    if (outer.is_array() && outer.size() == 1 && outer[0].is_string()) {
      outer = nlohmann::json::parse(outer[0].get<std::string>(), nullptr, /*allow_exceptions=*/false);
    }
    if (outer.is_discarded() || !outer.is_array()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: not a JSON list of process groups (cut short?)", where);
    }
    for (const nlohmann::json& pg : outer) {
      if (!pg.is_object() || !pg.contains("pg_name") || !pg["pg_name"].is_string()) {
        return NS_ERROR(Code::kInvalidArgument, "{}: a process group without a pg_name string", where);
      }
      ChakraGroup g{pg["pg_name"].get<std::string>(), {}};
      const std::string at = fmt::format("{}: group '{}'", where, g.name);
      if (pg.contains("ranks") && !rankList(pg["ranks"], &g.members)) {
        return NS_ERROR(Code::kInvalidArgument, "{}: 'ranks' is not a list of ranks", at);
      }
      if (g.members.empty()) {  // PyTorch writes no ranks for a group of all ranks 0..group_size-1
        const int64_t size =
            pg.contains("group_size") && pg["group_size"].is_number_integer() ? pg["group_size"].get<int64_t>() : world;
        if (size < 1 || size > world) {
          return NS_ERROR(Code::kInvalidArgument, "{}: group_size {} for a trace of {} ranks", at, size, world);
        }
        for (int r = 0; r < size; ++r) g.members.push_back(r);
      }
      NS_RETURN_IF_ERROR(checkMembers(g.members, at, world));
      groups[g.name] = std::move(g);
    }
    return groups;
  }
  return groups;
}

}  // namespace nshim::workload
