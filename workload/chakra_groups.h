// Where a Chakra trace's process groups come from, in the order the reader takes them: the
// process-group list a PyTorch-derived ET carries in a METADATA_NODE (its inputs.values: a JSON list
// holding the JSON text of PyTorch's pg_config_info, as ASTRA-sim reads it), else ASTRA-sim's
// comm-group JSON ({"<pg_name>": [global ranks], ...}). Comm nodes name a group by their pg_name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "workload/chakra_et.pb.h"

namespace nshim::workload {

struct ChakraGroup {
  std::string name;
  std::vector<int> members;  // sorted global ranks; the index is the rank in the group
};
using ChakraGroups = std::map<std::string, ChakraGroup>;

// ASTRA-sim's comm-group JSON; errors name `name` (the file) and the group.
Result<ChakraGroups> parseCommGroupJson(const std::string& text, const std::string& name, int world);

// The groups of the first METADATA_NODE of `nodes` that lists process groups (pg_name, ranks; an empty
// ranks list is 0..group_size-1); none when no node does. Errors name the file and the node.
Result<ChakraGroups> groupsFromMetadata(const std::vector<chakra::Node>& nodes, const std::string& name, int world);

}  // namespace nshim::workload
