// Chakra execution-trace files (MLCommons Chakra, ASTRA-sim's input): one file per rank, named
// `NAME.<rank>.et`, holding a GlobalMetadata message and then Node messages, each message preceded by
// its length as a protobuf varint (the framing of Chakra's own encoder and decoder). This file reads
// and writes that framing with the protobuf library and the schema subset in chakra_et.proto, and
// reads nodes' attributes by name. Errors name the file, the message's index and its byte offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "workload/chakra_et.pb.h"

namespace nshim::workload {

// Bounds against hostile files: one message, and the nodes of one file.
constexpr uint64_t kMaxChakraMessageBytes = 64ull << 20;
constexpr size_t kMaxChakraNodes = size_t{1} << 24;

struct ChakraFile {
  chakra::GlobalMetadata metadata;
  std::vector<chakra::Node> nodes;
  std::vector<uint64_t> offsets;  // byte offset of each node's length prefix, for messages
};

Result<ChakraFile> parseChakraFile(std::string_view bytes, const std::string& name);
Result<ChakraFile> readChakraFile(const std::string& path);

// The framed bytes of a file with this metadata and these nodes.
std::string serializeChakraFile(const chakra::GlobalMetadata& metadata, const std::vector<chakra::Node>& nodes);

// A node's attribute by name; nullptr when it has none.
const chakra::AttributeProto* findAttr(const chakra::Node& node, std::string_view name);
// An integer attribute (any of the schema's integer and bool kinds); nullopt when absent or not an
// integer, and *error set when it is present but not an integer.
std::optional<int64_t> attrInt(const chakra::Node& node, std::string_view name, std::string* error);
// A string attribute, or an integer one written as its decimal text; nullopt when absent.
std::optional<std::string> attrText(const chakra::Node& node, std::string_view name);

// Chakra's spelling of a node type ("COMM_COLL_NODE") and of a collective ("ALL_REDUCE").
const char* chakraNodeTypeName(int type);
const char* chakraCollectiveName(int64_t commType);

}  // namespace nshim::workload
