// PyTorch execution-trace files -> calls (pytorch_et_nodes.h): the JSON is parsed with nlohmann
// keeping only the process-group description and the record_param_comms nodes (with their lines),
// then each node's collective, dtype, counts, splits, rank argument and group fields are decoded.
#include "workload/pytorch_et_nodes.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <iterator>
#include <numeric>

#include <nlohmann/json.hpp>

namespace nshim::workload::pytorch_et {
namespace {

using Json = nlohmann::json;

// Hands nlohmann the text one char at a time and publishes how far it has read, so that the parse
// callback knows the line of the node that starts.
struct CursorIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* at = nullptr;
  const char** cursor = nullptr;
  reference operator*() const { return *at; }
  CursorIterator& operator++() {
    *cursor = ++at;
    return *this;
  }
  bool operator==(const CursorIterator& other) const { return at == other.at; }
};

// Line of a byte offset; offsets asked for must not decrease.
struct LineCounter {
  std::string_view text;
  size_t pos = 0;
  int64_t line = 1;
  int64_t at(size_t offset) {
    for (offset = std::min(offset, text.size()); pos < offset; ++pos) line += text[pos] == '\n';
    return line;
  }
};

// Second pass over malformed JSON: nlohmann's reason and byte position.
struct ErrorSax : nlohmann::json_sax<Json> {
  size_t position = 0;
  std::string reason;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex) override {
    position = pos;
    reason = ex.what();
    const size_t column = reason.find("column ");
    const size_t colon = column == std::string::npos ? column : reason.find(": ", column);
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
    return false;
  }
};

Status jsonError(std::string_view text, const std::string& name, const char* what) {
  ErrorSax sax;
  Json::sax_parse(text.data(), text.data() + text.size(), &sax);
  const size_t offset = std::min(sax.position > 0 ? sax.position - 1 : 0, text.size());
  LineCounter lines{text};
  return NS_ERROR(Code::kInvalidArgument, "{}:{}: {} is not valid JSON at byte {}: {}", name, lines.at(offset), what,
                  offset, sax.reason.empty() ? "malformed" : sax.reason);
}

std::optional<int64_t> intOf(const Json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return u <= static_cast<uint64_t>(INT64_MAX) ? std::optional<int64_t>(static_cast<int64_t>(u)) : std::nullopt;
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

std::string shortText(const Json& v) {
  if (v.is_structured()) return v.is_array() ? "a list" : "an object";
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

const Json* attr(const Json& node, std::string_view key) {
  auto attrs = node.find("attrs");
  if (attrs == node.end() || !attrs->is_array()) return nullptr;
  for (const Json& a : *attrs) {
    if (!a.is_object()) continue;
    auto n = a.find("name");
    auto v = a.find("value");
    if (n != a.end() && n->is_string() && n->get_ref<const std::string&>() == key && v != a.end()) return &*v;
  }
  return nullptr;
}

// An integer in [lo, hi] or an error naming the field; nullopt when `v` is null.
Result<std::optional<int64_t>> boundedInt(const Json* v, const std::string& where, std::string_view field, int64_t lo,
                                          int64_t hi) {
  if (v == nullptr) return std::optional<int64_t>();
  std::optional<int64_t> x = intOf(*v);
  if (!x || *x < lo || *x > hi) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} is not an integer in [{}, {}]", where, field,
                    shortText(*v), lo, hi);
  }
  return x;
}

struct CallName {
  const char* name;  // PARAM's normalization: lower case, letters only
  OpKind kind;
  Role role;
};
constexpr CallName kCallNames[] = {
    {"allreduce", OpKind::kAllReduce, Role::kSelf},
    {"allreducecoalesced", OpKind::kAllReduce, Role::kSelf},
    {"barrier", OpKind::kAllReduce, Role::kSelf},
    {"allgather", OpKind::kAllGather, Role::kSelf},
    {"allgatherbase", OpKind::kAllGather, Role::kSelf},
    {"allgatherintotensor", OpKind::kAllGather, Role::kSelf},
    {"allgatherintotensorcoalesced", OpKind::kAllGather, Role::kSelf},
    {"allgathercoalesced", OpKind::kAllGather, Role::kSelf},
    {"reducescatter", OpKind::kReduceScatter, Role::kSelf},
    {"reducescatterbase", OpKind::kReduceScatter, Role::kSelf},
    {"reducescattertensor", OpKind::kReduceScatter, Role::kSelf},
    {"reducescattertensorcoalesced", OpKind::kReduceScatter, Role::kSelf},
    {"broadcast", OpKind::kBroadcast, Role::kRoot},
    {"broadcastoop", OpKind::kBroadcast, Role::kRoot},
    {"reduce", OpKind::kReduce, Role::kRoot},
    {"reduceoop", OpKind::kReduce, Role::kRoot},
    {"gather", OpKind::kGather, Role::kRoot},
    {"scatter", OpKind::kScatter, Role::kRoot},
    {"send", OpKind::kSend, Role::kPeer},
    {"recv", OpKind::kRecv, Role::kPeer},
    {"alltoall", OpKind::kAllToAll, Role::kSelf},
    {"alltoallv", OpKind::kAllToAll, Role::kSelf},
    {"alltoallbase", OpKind::kAllToAll, Role::kSelf},
    {"alltoallsingle", OpKind::kAllToAll, Role::kSelf},
};

struct TypeName {
  const char* name;  // lower case: c10's ScalarType names and the tensor type names of the inputs
  DataType type;
  uint8_t bytes;  // of one element
  bool native;    // false: no NCCL type, moved as bytes
};
constexpr TypeName kTypeNames[] = {
    {"float", DataType::kFloat32, 4, true},
    {"half", DataType::kFloat16, 2, true},
    {"c10::half", DataType::kFloat16, 2, true},
    {"bfloat16", DataType::kBfloat16, 2, true},
    {"c10::bfloat16", DataType::kBfloat16, 2, true},
    {"double", DataType::kFloat64, 8, true},
    {"int", DataType::kInt32, 4, true},
    {"long", DataType::kInt64, 8, true},
    {"long int", DataType::kInt64, 8, true},
    {"byte", DataType::kUint8, 1, true},
    {"unsigned char", DataType::kUint8, 1, true},
    {"char", DataType::kInt8, 1, true},
    {"signed char", DataType::kInt8, 1, true},
    {"bool", DataType::kUint8, 1, true},
    {"uint32", DataType::kUint32, 4, true},
    {"uint64", DataType::kUint64, 8, true},
    {"float8_e4m3fn", DataType::kFp8E4M3, 1, true},
    {"float8_e5m2", DataType::kFp8E5M2, 1, true},
    {"short", DataType::kUint8, 2, false},
    {"short int", DataType::kUint8, 2, false},
    {"uint16", DataType::kUint8, 2, false},
    {"complexhalf", DataType::kUint8, 4, false},
    {"complexfloat", DataType::kUint8, 8, false},
    {"complexdouble", DataType::kUint8, 16, false},
    {"float8_e4m3fnuz", DataType::kUint8, 1, false},
    {"float8_e5m2fnuz", DataType::kUint8, 1, false},
    {"qint8", DataType::kUint8, 1, false},
    {"quint8", DataType::kUint8, 1, false},
    {"qint32", DataType::kUint8, 4, false},
};

// Elements of the tensors in `v` (a tensor is [id, storage, offset, numel, itemsize, device]).
void tensorElems(const Json& v, int depth, int64_t* elems, int64_t* itemSize) {
  if (!v.is_array() || depth > 3) return;
  if (v.size() == 6 && v[5].is_string() && intOf(v[3]) && intOf(v[4])) {
    *elems = std::min(kMaxElements + 1, *elems + std::clamp<int64_t>(*intOf(v[3]), 0, kMaxElements + 1));
    *itemSize = *intOf(v[4]);
    return;
  }
  for (const Json& e : v) tensorElems(e, depth + 1, elems, itemSize);
}

const Json* valuesOf(const Json& node, const char* side) {
  auto it = node.find(side);
  if (it == node.end()) return nullptr;
  if (it->is_array()) return &*it;
  auto values = it->is_object() ? it->find("values") : it->end();
  return it->is_object() && values != it->end() && values->is_array() ? &*values : nullptr;
}

Result<std::vector<int64_t>> splitList(const Json* v, const std::string& where, const char* field, int maxWorld) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  Json parsed;
  if (v->is_string()) {
    const std::string& text = v->get_ref<const std::string&>();
    if (text.find("...") != std::string::npos) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': the list was truncated by the recorder", where, field);
    }
    parsed = Json::parse(text, nullptr, false);
    v = &parsed;
  }
  if (!v->is_array() || v->size() > static_cast<size_t>(maxWorld)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} is not a list of at most {} sizes", where, field,
                    shortText(*v), maxWorld);
  }
  for (const Json& e : *v) {
    NS_ASSIGN_OR_RETURN(std::optional<int64_t> x, boundedInt(&e, where, field, 0, kMaxElements));
    out.push_back(*x);
  }
  return out;
}

Result<Call> decodeCall(const Json& node, int64_t line, const std::string& file, const PyTorchEtOptions& options,
                        bool* idle, Notes* notes) {
  Call c;
  c.line = line;
  auto id = node.find("id");
  if (id == node.end() || !intOf(*id) || *intOf(*id) < 0) {
    return NS_ERROR(Code::kInvalidArgument, "{}:{}: record_param_comms node: field 'id': missing or not a node id",
                    file, line);
  }
  c.id = static_cast<uint64_t>(*intOf(*id));
  const std::string where = fmt::format("{}:{}: node {} (record_param_comms)", file, line, c.id);
  static const Json kEmpty = Json::array();
  const Json& values = valuesOf(node, "inputs") ? *valuesOf(node, "inputs") : kEmpty;
  const Json* name = attr(node, "collective_name");
  size_t k = 0;  // the collective name's place in the inputs (the first string, or the attribute's value)
  while (k < values.size() && !(values[k].is_string() && (name == nullptr || values[k] == *name))) ++k;
  if (name == nullptr && k < values.size()) name = &values[k];
  if (name == nullptr || !name->is_string()) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: field 'collective_name': missing (no attribute, no name in the "
                    "inputs)",
                    where);
  }
  std::string normal;
  for (char ch : name->get_ref<const std::string&>()) {
    if (std::isalpha(static_cast<unsigned char>(ch))) normal += static_cast<char>(std::tolower(ch));
  }
  *idle = normal == "wait" || normal == "init";
  if (*idle) return c;
  auto known =
      std::find_if(std::begin(kCallNames), std::end(kCallNames), [&](const CallName& n) { return normal == n.name; });
  if (known == std::end(kCallNames)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field 'collective_name': {} is not a collective ncclshim replays",
                    where, shortText(*name));
  }
  c.kind = known->kind;
  c.role = known->role;
  const bool positional = k < values.size();
  if (positional && k >= 1) c.rankArg = intOf(values[k - 1]);
  if (positional && k >= 2 && values[k - 2].is_array() && !values[k - 2].empty() && values[k - 2][0].is_string()) {
    c.pgName = values[k - 2][0].get<std::string>();
  } else if (positional && k >= 2) {
    c.backendId = intOf(values[k - 2]);
  }
  if (const Json* pg = attr(node, "pg_name"); pg != nullptr && pg->is_string()) c.pgName = pg->get<std::string>();
  if (c.pgName && c.pgName->empty()) c.pgName.reset();
  const int64_t maxWorld = options.maxWorldSize;
  NS_ASSIGN_OR_RETURN(c.pgSize, boundedInt(attr(node, "pg_size"), where, "pg_size", 0, maxWorld));
  NS_ASSIGN_OR_RETURN(c.start, boundedInt(attr(node, "global_rank_start"), where, "global_rank_start", -1, INT32_MAX));
  NS_ASSIGN_OR_RETURN(c.stride,
                      boundedInt(attr(node, "global_rank_stride"), where, "global_rank_stride", -1, INT32_MAX));
  auto small = [&](size_t i) {  // a positional group field, kept when it is in range
    std::optional<int64_t> x = intOf(values[i]);
    return x && *x >= -1 && *x <= maxWorld ? x : std::nullopt;
  };
  if (!c.pgSize && positional && values.size() == k + 6) {  // 1.0.3+: ..., splits, start, stride, world size
    c.start = small(k + 3), c.stride = small(k + 4), c.pgSize = small(k + 5);
  } else if (!c.pgSize && positional && values.size() == k + 4) {  // 1.0.2: ..., splits, world size
    c.pgSize = small(k + 3);
  }
  if (c.pgSize && *c.pgSize < 0) c.pgSize.reset();
  auto number = [&](const char* key) {
    auto it = node.find(key);
    return it != node.end() && it->is_number() && it->get<double>() >= 0 ? it->get<double>() : -1.0;
  };
  c.ts = number("ts");
  c.dur = node.contains("inclusive_dur") ? number("inclusive_dur") : number("dur");
  if (normal == "barrier") {
    c.inElems = c.outElems = 1;
    return c;
  }
  // dtype: the attribute, else the first input's tensor type; elements: the attributes, else the tensors.
  int64_t inTensorElems = 0, outTensorElems = 0, itemSize = 0;
  if (positional && k >= 4) tensorElems(values[0], 0, &inTensorElems, &itemSize);
  if (const Json* outs = valuesOf(node, "outputs"); outs != nullptr && !outs->empty()) {
    tensorElems((*outs)[0], 0, &outTensorElems, &itemSize);
  }
  std::string dtype;
  auto inputs = node.find("inputs");
  const Json* types = inputs != node.end() && inputs->is_object() && inputs->contains("types") ? &(*inputs)["types"]
                      : node.contains("input_types")                                           ? &node["input_types"]
                                                     : nullptr;  // 1.0.1: input_types
  if (const Json* d = attr(node, "dtype"); d != nullptr && d->is_string()) {
    dtype = d->get<std::string>();
  } else if (types != nullptr && types->is_array() && !types->empty() && (*types)[0].is_string()) {
    const std::string& t = (*types)[0].get_ref<const std::string&>();
    const size_t open = t.find("Tensor(");
    const size_t close = open == std::string::npos ? open : t.find(')', open);
    if (close != std::string::npos) dtype = t.substr(open + 7, close - open - 7);
  }
  std::string lower = dtype;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  auto type =
      std::find_if(std::begin(kTypeNames), std::end(kTypeNames), [&](const TypeName& t) { return lower == t.name; });
  int64_t scale = 1;
  if (type != std::end(kTypeNames)) {
    c.type = type->type;
    if (!type->native) scale = type->bytes, notes->byteTypes.insert(dtype);
  } else if (itemSize >= 1 && itemSize <= 64) {
    c.type = DataType::kUint8, scale = itemSize, notes->byteTypes.insert(dtype.empty() ? "?" : dtype);
  } else {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: field 'dtype': '{}' is not a PyTorch dtype ncclshim knows, and the "
                    "inputs give no element size",
                    where, dtype);
  }
  NS_ASSIGN_OR_RETURN(std::optional<int64_t> in,
                      boundedInt(attr(node, "in_msg_nelems"), where, "in_msg_nelems", 0, kMaxElements));
  NS_ASSIGN_OR_RETURN(std::optional<int64_t> out,
                      boundedInt(attr(node, "out_msg_nelems"), where, "out_msg_nelems", 0, kMaxElements));
  c.inElems = in.value_or(std::min(inTensorElems, kMaxElements)) * scale;
  c.outElems = out.value_or(std::min(outTensorElems, kMaxElements)) * scale;
  const Json* inSplit = attr(node, "in_split_size");
  const Json* outSplit = attr(node, "out_split_size");
  if (!inSplit && positional && values.size() >= k + 3) inSplit = &values[k + 1], outSplit = &values[k + 2];
  NS_ASSIGN_OR_RETURN(c.inSplit, splitList(inSplit, where, "in_split_size", options.maxWorldSize));
  NS_ASSIGN_OR_RETURN(c.outSplit, splitList(outSplit, where, "out_split_size", options.maxWorldSize));
  return c;
}

// The process-group description: a JSON string (or list) of {pg_name, ranks, group_size, backend_id}.
Status readDescription(const Json& node, int64_t line, RankFile* f, int maxWorld) {
  const std::string where = fmt::format("{}:{}: node {} (## process_group:init ##)", f->name, line,
                                        node.contains("id") ? shortText(node["id"]) : "?");
  const Json* values = valuesOf(node, "inputs");
  if (values == nullptr || values->empty()) return Status::Ok();
  Json parsed;
  const Json* list = &(*values)[0];
  if (list->is_string()) {
    parsed = Json::parse(list->get_ref<const std::string&>(), nullptr, false);
    if (parsed.is_discarded()) {
      f->truncatedDescription = true;  // PyTorch cuts long strings
      return Status::Ok();
    }
    list = &parsed;
  }
  if (!list->is_array()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field 'inputs': not a list of process groups", where);
  }
  for (const Json& pg : *list) {
    if (!pg.is_object()) return NS_ERROR(Code::kInvalidArgument, "{}: a process group is not an object", where);
    auto nameIt = pg.find("pg_name");
    if (nameIt == pg.end() || !(nameIt->is_string() || intOf(*nameIt))) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'pg_name': missing or not a name", where);
    }
    const std::string name = nameIt->is_string() ? nameIt->get<std::string>() : std::to_string(*intOf(*nameIt));
    const std::string field = fmt::format("process group '{}': field", name);
    NS_ASSIGN_OR_RETURN(std::optional<int64_t> size, boundedInt(pg.contains("group_size") ? &pg["group_size"] : nullptr,
                                                                where, field + " 'group_size", 1, maxWorld));
    std::vector<int> members;
    if (auto ranks = pg.find("ranks"); ranks != pg.end()) {
      if (!ranks->is_array() || ranks->size() > static_cast<size_t>(maxWorld)) {
        return NS_ERROR(Code::kInvalidArgument, "{}: {} 'ranks': not a list of at most {} ranks", where, field,
                        maxWorld);
      }
      for (const Json& r : *ranks) {
        NS_ASSIGN_OR_RETURN(std::optional<int64_t> rank, boundedInt(&r, where, field + " 'ranks", 0, maxWorld - 1));
        members.push_back(static_cast<int>(*rank));
      }
    }
    if (!size && members.empty()) return NS_ERROR(Code::kInvalidArgument, "{}: {} 'group_size': missing", where, field);
    if (members.empty()) {  // PyTorch lists no ranks for a group of all ranks
      members.resize(static_cast<size_t>(*size));
      std::iota(members.begin(), members.end(), 0);
      if (f->declaredWorld != 0 && f->declaredWorld != *size) {
        return NS_ERROR(Code::kInvalidArgument, "{}: {} 'group_size': groups of all ranks of {} and {} ranks", where,
                        field, f->declaredWorld, *size);
      }
      f->declaredWorld = static_cast<int>(*size);
      if (f->defaultPg.empty()) f->defaultPg = name;
    } else if (size && static_cast<size_t>(*size) != members.size()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: {} 'ranks': {} ranks in a group of group_size {}", where, field,
                      members.size(), *size);
    }
    std::vector<int> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: {} 'ranks': a rank is listed twice", where, field);
    }
    auto [it, added] = f->groups.emplace(name, members);
    if (!added && it->second != members) {
      return NS_ERROR(Code::kInvalidArgument, "{}: process group '{}' is described twice with different ranks", where,
                      name);
    }
    auto backend = pg.find("backend_id");
    if (backend != pg.end() && intOf(*backend)) f->backendNames[*intOf(*backend)] = name;
  }
  return Status::Ok();
}

Result<RankFile> parseRankFile(std::string_view text, const std::string& name, const PyTorchEtOptions& options,
                               Notes* notes) {
  RankFile f;
  f.name = name;
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: gzip-compressed bytes: files are decompressed as they are read "
                    "(load it by its path), bytes handed over as text are not",
                    name);
  }
  // Parse keeping only the nodes that matter (a trace holds every operator PyTorch ran), each with
  // the line of its opening brace.
  const char* cursor = text.data();
  LineCounter lines{text};
  std::string topKey;
  int64_t nodeLine = 0;
  std::vector<int64_t> keptLines;
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == Json::parse_event_t::key) {
      topKey = parsed.is_string() ? parsed.get<std::string>() : "";
      if (topKey == "nodes") keptLines.clear(), f.nodes = 0;
    }
    if (depth != 2 || topKey != "nodes") return true;
    if (event == Json::parse_event_t::object_start) nodeLine = lines.at(static_cast<size_t>(cursor - text.data()));
    if (event == Json::parse_event_t::value || event == Json::parse_event_t::array_end) return false;
    if (event != Json::parse_event_t::object_end) return true;
    ++f.nodes;
    auto n = parsed.find("name");
    const bool keep = n != parsed.end() && n->is_string() &&
                      (*n == "record_param_comms" ||
                       n->get_ref<const std::string&>().find("process_group:init") != std::string::npos);
    if (keep) keptLines.push_back(nodeLine);
    return keep;
  };
  Json root = Json::parse(CursorIterator{text.data(), &cursor}, CursorIterator{text.data() + text.size(), &cursor},
                          callback, /*allow_exceptions=*/false);
  if (root.is_discarded()) return jsonError(text, name, "the file");
  auto nodes = root.is_object() ? root.find("nodes") : root.end();
  if (!root.is_object() || nodes == root.end() || !nodes->is_array()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: not a PyTorch execution trace: no \"nodes\" list at the top level",
                    name);
  }
  auto schema = root.find("schema");
  if (schema != root.end() && schema->is_string()) f.schema = schema->get<std::string>();
  for (size_t i = 0; i < nodes->size(); ++i) {
    const Json& node = (*nodes)[i];
    const int64_t line = i < keptLines.size() ? keptLines[i] : 0;
    auto nodeName = node.find("name");  // kept nodes have one
    if (nodeName == node.end() || *nodeName != "record_param_comms") {
      NS_RETURN_IF_ERROR(readDescription(node, line, &f, options.maxWorldSize));
      continue;
    }
    bool idle = false;
    NS_ASSIGN_OR_RETURN(Call c, decodeCall(node, line, name, options, &idle, notes));
    if (idle) ++f.idle;
    else f.calls.push_back(std::move(c));
  }
  std::sort(f.calls.begin(), f.calls.end(), [](const Call& a, const Call& b) { return a.id < b.id; });
  for (size_t i = 1; i < f.calls.size(); ++i) {
    if (f.calls[i].id == f.calls[i - 1].id) {
      return NS_ERROR(Code::kInvalidArgument, "{}:{}: node {}: field 'id': used by two nodes (also line {})", name,
                      f.calls[i].line, f.calls[i].id, f.calls[i - 1].line);
    }
  }
  return f;
}

}  // namespace

// parseRankFile with nlohmann's exceptions stopped here (its accessors throw on a type not checked for).
Result<RankFile> readRankFile(std::string_view text, const std::string& name, const PyTorchEtOptions& options,
                              Notes* notes) {
  try {
    return parseRankFile(text, name, options, notes);
  } catch (const std::exception& e) {
    return NS_ERROR(Code::kInvalidArgument, "{}: unexpected JSON content: {}", name, e.what());
  }
}

}  // namespace nshim::workload::pytorch_et
