// Chakra file framing (varint-length-prefixed protobuf messages) and attribute access.
#include "workload/chakra_file.h"

#include "workload/input_file.h"
#include "workload/input_format.h"

namespace nshim::workload {
namespace {

void appendLength(std::string* out, uint64_t length) {
  while (length >= 0x80) {
    out->push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  out->push_back(static_cast<char>(length));
}

}  // namespace

Result<ChakraFile> parseChakraFile(std::string_view bytes, const std::string& name) {
  ChakraFile file;
  size_t pos = 0;
  for (size_t index = 0; pos < bytes.size(); ++index) {
    const size_t start = pos;
    uint64_t length = 0;
    if (!readVarint(bytes, &pos, &length)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: message {} (byte {}): the length prefix is cut or not a varint",
                      name, index, start);
    }
    if (length > kMaxChakraMessageBytes || length > bytes.size() - pos) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: message {} (byte {}): length {} runs past the end of the file "
                      "({} bytes)",
                      name, index, start, length, bytes.size());
    }
    const char* data = bytes.data() + pos;
    pos += length;
    if (index == 0) {
      if (!file.metadata.ParseFromArray(data, static_cast<int>(length))) {
        return NS_ERROR(Code::kInvalidArgument, "{}: message 0 (byte 0): not a Chakra GlobalMetadata", name);
      }
      continue;
    }
    if (file.nodes.size() >= kMaxChakraNodes) {
      return NS_ERROR(Code::kInvalidArgument, "{}: more than {} nodes in one file", name, kMaxChakraNodes);
    }
    chakra::Node& node = file.nodes.emplace_back();
    if (!node.ParseFromArray(data, static_cast<int>(length))) {
      return NS_ERROR(Code::kInvalidArgument, "{}: message {} (byte {}): not a Chakra Node", name, index, start);
    }
    file.offsets.push_back(start);
  }
  if (bytes.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: empty file (no Chakra GlobalMetadata)", name);
  return file;
}

Result<ChakraFile> readChakraFile(const std::string& path) {
  NS_ASSIGN_OR_RETURN(const std::string bytes, readInputFile(path));  // plain or gzip
  return parseChakraFile(bytes, path);
}

std::string serializeChakraFile(const chakra::GlobalMetadata& metadata, const std::vector<chakra::Node>& nodes) {
  std::string out;
  std::string message;
  metadata.SerializeToString(&message);
  appendLength(&out, message.size());
  out += message;
  for (const chakra::Node& node : nodes) {
    node.SerializeToString(&message);
    appendLength(&out, message.size());
    out += message;
  }
  return out;
}

const chakra::AttributeProto* findAttr(const chakra::Node& node, std::string_view name) {
  for (const chakra::AttributeProto& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::optional<int64_t> attrInt(const chakra::Node& node, std::string_view name, std::string* error) {
  const chakra::AttributeProto* attr = findAttr(node, name);
  if (!attr) return std::nullopt;
  using A = chakra::AttributeProto;
  switch (attr->value_case()) {
    case A::kInt32Val: return attr->int32_val();
    case A::kInt64Val: return attr->int64_val();
    case A::kUint32Val: return attr->uint32_val();
    case A::kUint64Val:
      if (attr->uint64_val() > static_cast<uint64_t>(INT64_MAX)) break;
      return static_cast<int64_t>(attr->uint64_val());
    case A::kSint32Val: return attr->sint32_val();
    case A::kSint64Val: return attr->sint64_val();
    case A::kFixed32Val: return attr->fixed32_val();
    case A::kFixed64Val:
      if (attr->fixed64_val() > static_cast<uint64_t>(INT64_MAX)) break;
      return static_cast<int64_t>(attr->fixed64_val());
    case A::kSfixed32Val: return attr->sfixed32_val();
    case A::kSfixed64Val: return attr->sfixed64_val();
    case A::kBoolVal: return attr->bool_val() ? 1 : 0;
    default: break;
  }
  if (error) *error = fmt::format("attribute '{}' is not an integer below 2^63", name);
  return std::nullopt;
}

std::optional<std::string> attrText(const chakra::Node& node, std::string_view name) {
  const chakra::AttributeProto* attr = findAttr(node, name);
  if (!attr) return std::nullopt;
  if (attr->value_case() == chakra::AttributeProto::kStringVal) return attr->string_val();
  std::string error;
  if (std::optional<int64_t> value = attrInt(node, name, &error)) return std::to_string(*value);
  return std::nullopt;
}

const char* chakraNodeTypeName(int type) {
  if (type >= 0 && type <= chakra::NodeType_MAX && chakra::NodeType_IsValid(type)) {
    return chakra::NodeType_Name(static_cast<chakra::NodeType>(type)).c_str();
  }
  return "unknown node type";
}

const char* chakraCollectiveName(int64_t commType) {
  if (commType >= 0 && commType <= chakra::CollectiveCommType_MAX &&
      chakra::CollectiveCommType_IsValid(static_cast<int>(commType))) {
    return chakra::CollectiveCommType_Name(static_cast<chakra::CollectiveCommType>(commType)).c_str();
  }
  return "unknown comm_type";
}

}  // namespace nshim::workload
