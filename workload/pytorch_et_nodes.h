// What one PyTorch execution-trace file says (pytorch_et_workload.h has the format's rules): its JSON
// parsed with nlohmann keeping only the `## process_group:init ##` node (the process-group
// description: group names, members, backend ids) and the record_param_comms nodes, each with the
// line of its opening brace, and those nodes decoded into calls: the collective, the dtype (PyTorch's
// names mapped to NCCL types), element counts, all-to-all splits, the rank argument and the group
// fields. Ranks, the world, communicators and operations are pytorch_et_workload.cc's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "workload/pytorch_et_workload.h"
#include "workload/workload.h"

namespace nshim::workload::pytorch_et {

constexpr int64_t kMaxElements = int64_t{1} << 40;  // per call and piece: bytes stay far from overflowing

// What the rank argument of a node (the Int before the collective name in its inputs) is.
enum class Role : uint8_t { kSelf, kRoot, kPeer };

// One record_param_comms node, decoded; counts are in elements of `type`.
struct Call {
  uint64_t id = 0;
  int64_t line = 0;
  OpKind kind = OpKind::kAllReduce;
  Role role = Role::kSelf;
  DataType type = DataType::kFloat32;
  int64_t inElems = 0, outElems = 0;
  std::vector<int64_t> inSplit, outSplit;
  std::optional<int64_t> rankArg, backendId, start, stride, pgSize;
  std::optional<std::string> pgName;
  double ts = -1, dur = -1;  // microseconds; -1: not in the trace
};

// One file, read.
struct RankFile {
  std::string name, schema;
  std::vector<Call> calls;                         // node-id order
  std::map<std::string, std::vector<int>> groups;  // process-group description: name -> members
  std::map<int64_t, std::string> backendNames;     // 1.0.2 traces: backend_id -> pg name
  std::string defaultPg;                           // a described group of all ranks, if any
  int declaredWorld = 0;                           // its size; 0 unknown
  bool truncatedDescription = false;
  size_t nodes = 0, idle = 0;  // all nodes; wait / init nodes
  int rank = -1;               // set by the workload's rank rules
  bool rankFromName = false;
};

// What the files' reading and conversion say once in the workload's description.
struct Notes {
  std::set<std::string> byteTypes;  // dtypes moved as bytes
  bool worldGuess = false;          // an operation without group information ran on the whole world
};

// One file's bytes (JSON text; gzip-compressed bytes are refused: files are inflated when read, see
// input_file.h) -> its calls, in node-id order, and its process groups. nlohmann's exceptions stop
// here. Errors name the file, line, node and field.
Result<RankFile> readRankFile(std::string_view text, const std::string& name, const PyTorchEtOptions& options,
                              Notes* notes);

}  // namespace nshim::workload::pytorch_et
