// PyTorch execution traces -> Workload: each file's JSON is parsed keeping only the process-group
// description and the record_param_comms nodes (with their lines), the nodes are decoded into calls,
// then the files' ranks, the world and the communicators are resolved and every rank's calls become
// operations (pytorch_et_workload.h has the rules).
#include "workload/pytorch_et_workload.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "common/fnv1a.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxElements = int64_t{1} << 40;  // per call and piece: bytes stay far from overflowing

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
  CursorIterator& operator++() { *cursor = ++at; return *this; }
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

// What the rank argument of a node (the Int before the collective name in its inputs) is.
enum class Role : uint8_t { kSelf, kRoot, kPeer };

struct CallName {
  const char* name;  // PARAM's normalization: lower case, letters only
  OpKind kind;
  Role role;
};
constexpr CallName kCallNames[] = {
    {"allreduce", OpKind::kAllReduce, Role::kSelf}, {"allreducecoalesced", OpKind::kAllReduce, Role::kSelf},
    {"barrier", OpKind::kAllReduce, Role::kSelf}, {"allgather", OpKind::kAllGather, Role::kSelf},
    {"allgatherbase", OpKind::kAllGather, Role::kSelf}, {"allgatherintotensor", OpKind::kAllGather, Role::kSelf},
    {"allgatherintotensorcoalesced", OpKind::kAllGather, Role::kSelf},
    {"allgathercoalesced", OpKind::kAllGather, Role::kSelf}, {"reducescatter", OpKind::kReduceScatter, Role::kSelf},
    {"reducescatterbase", OpKind::kReduceScatter, Role::kSelf},
    {"reducescattertensor", OpKind::kReduceScatter, Role::kSelf},
    {"reducescattertensorcoalesced", OpKind::kReduceScatter, Role::kSelf},
    {"broadcast", OpKind::kBroadcast, Role::kRoot}, {"broadcastoop", OpKind::kBroadcast, Role::kRoot},
    {"reduce", OpKind::kReduce, Role::kRoot}, {"reduceoop", OpKind::kReduce, Role::kRoot},
    {"gather", OpKind::kGather, Role::kRoot}, {"scatter", OpKind::kScatter, Role::kRoot},
    {"send", OpKind::kSend, Role::kPeer}, {"recv", OpKind::kRecv, Role::kPeer},
    {"alltoall", OpKind::kAllToAll, Role::kSelf}, {"alltoallv", OpKind::kAllToAll, Role::kSelf},
    {"alltoallbase", OpKind::kAllToAll, Role::kSelf}, {"alltoallsingle", OpKind::kAllToAll, Role::kSelf},
};

struct TypeName {
  const char* name;  // lower case: c10's ScalarType names and the tensor type names of the inputs
  DataType type;
  uint8_t bytes;     // of one element
  bool native;       // false: no NCCL type, moved as bytes
};
constexpr TypeName kTypeNames[] = {
    {"float", DataType::kFloat32, 4, true}, {"half", DataType::kFloat16, 2, true},
    {"c10::half", DataType::kFloat16, 2, true}, {"bfloat16", DataType::kBfloat16, 2, true},
    {"c10::bfloat16", DataType::kBfloat16, 2, true}, {"double", DataType::kFloat64, 8, true},
    {"int", DataType::kInt32, 4, true}, {"long", DataType::kInt64, 8, true}, {"long int", DataType::kInt64, 8, true},
    {"byte", DataType::kUint8, 1, true}, {"unsigned char", DataType::kUint8, 1, true},
    {"char", DataType::kInt8, 1, true}, {"signed char", DataType::kInt8, 1, true}, {"bool", DataType::kUint8, 1, true},
    {"uint32", DataType::kUint32, 4, true}, {"uint64", DataType::kUint64, 8, true},
    {"float8_e4m3fn", DataType::kFp8E4M3, 1, true}, {"float8_e5m2", DataType::kFp8E5M2, 1, true},
    {"short", DataType::kUint8, 2, false}, {"short int", DataType::kUint8, 2, false},
    {"uint16", DataType::kUint8, 2, false}, {"complexhalf", DataType::kUint8, 4, false},
    {"complexfloat", DataType::kUint8, 8, false}, {"complexdouble", DataType::kUint8, 16, false},
    {"float8_e4m3fnuz", DataType::kUint8, 1, false}, {"float8_e5m2fnuz", DataType::kUint8, 1, false},
    {"qint8", DataType::kUint8, 1, false}, {"quint8", DataType::kUint8, 1, false},
    {"qint32", DataType::kUint8, 4, false},
};

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
  std::vector<Call> calls;                            // node-id order
  std::map<std::string, std::vector<int>> groups;     // process-group description: name -> members
  std::map<int64_t, std::string> backendNames;        // 1.0.2 traces: backend_id -> pg name
  std::string defaultPg;                              // a described group of all ranks, if any
  int declaredWorld = 0;                              // its size; 0 unknown
  bool truncatedDescription = false;
  size_t nodes = 0, idle = 0;                         // all nodes; wait / init nodes
  int rank = -1;
  bool rankFromName = false;
};

struct Notes {
  std::set<std::string> byteTypes;
  bool worldGuess = false;
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
    return NS_ERROR(Code::kInvalidArgument, "{}: field 'collective_name': missing (no attribute, no name in the "
                    "inputs)", where);
  }
  std::string normal;
  for (char ch : name->get_ref<const std::string&>()) {
    if (std::isalpha(static_cast<unsigned char>(ch))) normal += static_cast<char>(std::tolower(ch));
  }
  *idle = normal == "wait" || normal == "init";
  if (*idle) return c;
  auto known = std::find_if(std::begin(kCallNames), std::end(kCallNames),
                            [&](const CallName& n) { return normal == n.name; });
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
  NS_ASSIGN_OR_RETURN(c.start, boundedInt(attr(node, "global_rank_start"), where, "global_rank_start", -1,
                                           INT32_MAX));
  NS_ASSIGN_OR_RETURN(c.stride, boundedInt(attr(node, "global_rank_stride"), where, "global_rank_stride", -1,
                                            INT32_MAX));
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
                      : node.contains("input_types") ? &node["input_types"] : nullptr;  // 1.0.1: input_types
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
  auto type = std::find_if(std::begin(kTypeNames), std::end(kTypeNames),
                           [&](const TypeName& t) { return lower == t.name; });
  int64_t scale = 1;
  if (type != std::end(kTypeNames)) {
    c.type = type->type;
    if (!type->native) scale = type->bytes, notes->byteTypes.insert(dtype);
  } else if (itemSize >= 1 && itemSize <= 64) {
    c.type = DataType::kUint8, scale = itemSize, notes->byteTypes.insert(dtype.empty() ? "?" : dtype);
  } else {
    return NS_ERROR(Code::kInvalidArgument, "{}: field 'dtype': '{}' is not a PyTorch dtype ncclshim knows, and the "
                    "inputs give no element size", where, dtype);
  }
  NS_ASSIGN_OR_RETURN(std::optional<int64_t> in, boundedInt(attr(node, "in_msg_nelems"), where, "in_msg_nelems", 0,
                                                            kMaxElements));
  NS_ASSIGN_OR_RETURN(std::optional<int64_t> out, boundedInt(attr(node, "out_msg_nelems"), where, "out_msg_nelems", 0,
                                                             kMaxElements));
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

Result<RankFile> readRankFile(std::string_view text, const std::string& name, const PyTorchEtOptions& options,
                              Notes* notes) {
  RankFile f;
  f.name = name;
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b) {
    return NS_ERROR(Code::kInvalidArgument, "{}: gzip-compressed: gunzip it first", name);
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
                      (*n == "record_param_comms" || n->get_ref<const std::string&>().find("process_group:init") !=
                                                         std::string::npos);
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

// A call's group as its file gives it: the description's entry, or start/stride/size.
struct GroupSpec {
  std::string name;
  const std::vector<int>* listed = nullptr;  // the description's members
  int64_t start = 0, stride = 0, size = 0;   // otherwise members start + i * stride, i < size
  int64_t count() const { return listed ? static_cast<int64_t>(listed->size()) : size; }
  int member(int64_t i) const {
    return listed ? (*listed)[static_cast<size_t>(i)] : static_cast<int>(start + stride * i);
  }
};

std::optional<GroupSpec> describedGroup(const RankFile& f, const Call& c, int maxWorld) {
  std::optional<std::string> name = c.pgName;
  if (!name && c.backendId) {
    auto it = f.backendNames.find(*c.backendId);
    if (it != f.backendNames.end()) name = it->second;
  }
  if (name) {
    auto it = f.groups.find(*name);
    if (it != f.groups.end()) return GroupSpec{*name, &it->second};
  }
  if (c.start && c.stride && c.pgSize && *c.start >= 0 && *c.stride >= 1 && *c.pgSize >= 1 &&
      *c.start + *c.stride * (*c.pgSize - 1) < maxWorld) {
    return GroupSpec{name.value_or(""), nullptr, *c.start, *c.stride, *c.pgSize};
  }
  return std::nullopt;
}

std::string whereOf(const RankFile& f, const Call& c) {
  return fmt::format("{}:{}: node {} (record_param_comms)", f.name, c.line, c.id);
}

// The rank a file's content gives: the rank argument of a call whose rank argument is the caller's,
// through its group's members.
Status rankFromContent(RankFile& f, int maxWorld) {
  const Call* first = nullptr;
  for (const Call& c : f.calls) {
    if (c.role != Role::kSelf || !c.rankArg) continue;
    auto group = describedGroup(f, c, maxWorld);
    const bool world = !c.pgSize || (f.declaredWorld != 0 && *c.pgSize == f.declaredWorld);
    if (!group && !world) continue;  // a group whose members the trace does not give
    const int64_t size = group ? group->count() : maxWorld;
    if (*c.rankArg < 0 || *c.rankArg >= size) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'inputs': rank argument {} is not a rank of its {}-rank group",
                      whereOf(f, c), *c.rankArg, size);
    }
    const int rank = group ? group->member(*c.rankArg) : static_cast<int>(*c.rankArg);
    if (first != nullptr && rank != f.rank) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'inputs': makes this file rank {}, node {} (line {}) made it "
                      "rank {}", whereOf(f, c), rank, first->id, first->line, f.rank);
    }
    f.rank = rank;
    if (first == nullptr) first = &c;
  }
  return Status::Ok();
}

// "rank-3.json", "trace_3.json", "et.3.json" -> 3; -1 when the name ends in no number.
int rankFromName(const std::string& path) {
  std::string stem = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  size_t digits = stem.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(stem[digits - 1]))) --digits;
  if (digits == stem.size() || stem.size() - digits > 6) return -1;
  return std::stoi(stem.substr(digits));
}

class CommTable {
 public:
  explicit CommTable(int world) : world_(world) {}

  Result<const CommGroup*> commOf(const RankFile& f, const Call& c, int rank, Notes* notes) {
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", static_cast<const void*>(&f), c.pgName.value_or("-"),
                                        c.backendId.value_or(-2), c.start.value_or(-2), c.stride.value_or(-2),
                                        c.pgSize.value_or(-2), c.pgSize == 1 ? rank : -1);
    if (auto it = byCall_.find(key); it != byCall_.end()) return &comms_[it->second];
    std::string name;
    std::vector<int> members;
    if (std::optional<GroupSpec> spec = describedGroup(f, c, world_)) {
      name = spec->name;
      for (int64_t i = 0; i < spec->count(); ++i) members.push_back(spec->member(i));
    } else if (c.pgSize == 1) {
      name = c.pgName.value_or("") + "#" + std::to_string(rank), members = {rank};
    } else if (c.pgSize && *c.pgSize != world_) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'pg_name': group '{}' of {} ranks: the trace does not say "
                      "which (no process-group description entry, no global_rank_start/stride)", whereOf(f, c),
                      c.pgName.value_or(""), *c.pgSize);
    } else {
      notes->worldGuess = true;
      name = c.pgName.value_or(f.defaultPg), members.resize(static_cast<size_t>(world_));
      std::iota(members.begin(), members.end(), 0);
    }
    for (int m : members) {
      if (m >= world_) {
        return NS_ERROR(Code::kInvalidArgument, "{}: group '{}' holds rank {}, beyond the trace's {} ranks",
                        whereOf(f, c), name, m, world_);
      }
    }
    if (c.pgSize && *c.pgSize != 0 && static_cast<size_t>(*c.pgSize) != members.size()) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field 'pg_size': {} but group '{}' has {} ranks", whereOf(f, c),
                      *c.pgSize, name, members.size());
    }
    uint64_t id = fnv1a64(name.data(), name.size(), fnv1a64(members.data(), members.size() * sizeof(int)));
    id = id == 0 ? 1 : id;
    auto it = byId_.find(id);
    if (it == byId_.end()) {
      it = byId_.emplace(id, comms_.size()).first;
      comms_.push_back(CommGroup{id, std::move(members), ""});
    }
    byCall_.emplace(key, it->second);
    return &comms_[it->second];
  }

  std::deque<CommGroup>& comms() { return comms_; }
  const CommGroup& find(uint64_t id) const { return comms_[byId_.at(id)]; }

 private:
  int world_;
  std::deque<CommGroup> comms_;
  std::map<uint64_t, size_t> byId_;
  std::map<std::string, size_t> byCall_;  // a call's group fields in a file -> its communicator
};

int64_t toNs(double us) { return us <= 0 ? 0 : us >= 1e15 ? int64_t{1000000000000000000} : std::llround(us * 1000); }

// Per-peer elements of an all-to-all side: splits are dim-0 rows, each total / sum(splits) elements.
Result<std::vector<int64_t>> pieces(const std::vector<int64_t>& split, int64_t total, int n, const std::string& where,
                                    const char* field, const char* totalField) {
  if (split.empty()) {
    if (total % n != 0) {
      return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} elements do not split evenly over {} ranks", where,
                      totalField, total, n);
    }
    return std::vector<int64_t>(static_cast<size_t>(n), total / n);
  }
  if (split.size() != static_cast<size_t>(n)) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} entries for a group of {} ranks", where, field,
                    split.size(), n);
  }
  const int64_t sum = std::accumulate(split.begin(), split.end(), int64_t{0});
  if (sum == 0 ? total != 0 : total % sum != 0) {
    return NS_ERROR(Code::kInvalidArgument, "{}: field '{}': {} elements are not a whole number of rows of the splits "
                    "(sum {})", where, totalField, total, sum);
  }
  std::vector<int64_t> out;
  for (int64_t s : split) out.push_back(sum == 0 ? 0 : s * (total / sum));
  return out;
}

void skip(std::vector<SkippedRows>* skipped, const char* why, const WorkOp& op) {
  for (SkippedRows& s : *skipped) {
    if (s.kind == op.kind && s.why == why) return void(++s.rows);
  }
  skipped->push_back(SkippedRows{why, op.kind, "its group", 1, op.source});
}

bool timed(const RankFile& f) {
  return !f.calls.empty() && std::all_of(f.calls.begin(), f.calls.end(), [](const Call& c) { return c.ts >= 0; });
}

// NCCL's count of a call that is not an all-to-all (the per-rank block where the call has one).
int64_t countOf(const Call& c, int n) {
  switch (c.kind) {
    case OpKind::kReduceScatter: case OpKind::kScatter: return c.outElems ? c.outElems : c.inElems / n;
    case OpKind::kRecv: return c.outElems ? c.outElems : c.inElems;
    case OpKind::kAllGather: case OpKind::kGather: return c.inElems ? c.inElems : c.outElems / n;
    default: return c.inElems ? c.inElems : c.outElems;
  }
}

// One rank's calls -> operations.
Status convertRank(const RankFile& f, int rank, CommTable& table, Notes* notes, RankWork* out,
                   std::vector<SkippedRows>* skipped) {
  const uint32_t file = internSourceFile(f.name);
  const bool withTimes = timed(f);
  std::map<uint64_t, uint64_t> seq;
  std::map<uint64_t, int> selfOf;  // communicator -> this rank's place in it
  int groups = 0;
  double previousEnd = -1;
  for (const Call& c : f.calls) {
    const std::string where = whereOf(f, c);
    NS_ASSIGN_OR_RETURN(const CommGroup* comm, table.commOf(f, c, rank, notes));
    const int n = static_cast<int>(comm->members.size());
    auto [mine, added] = selfOf.emplace(comm->id, 0);
    if (added) {
      mine->second = static_cast<int>(std::find(comm->members.begin(), comm->members.end(), rank) -
                                      comm->members.begin());
    }
    const int self = mine->second;
    if (self == n) {
      return NS_ERROR(Code::kInvalidArgument, "{}: rank {} is not a member of its group ({} ranks from {})", where,
                      rank, n, comm->members.front());
    }
    WorkOp op;
    op.commId = comm->id;
    op.kind = c.kind;
    op.type = c.type;
    op.source = SourceLine(file, c.line);
    op.count = static_cast<uint64_t>(countOf(c, n));
    if (withTimes) {
      op.issueNs = toNs(c.ts - f.calls.front().ts);
      op.recordedNs = c.dur >= 0 ? toNs(c.dur) : -1;
      op.computeNs = previousEnd >= 0 ? toNs(c.ts - previousEnd) : 0;
      previousEnd = c.ts + std::max(c.dur, 0.0);
    }
    if (c.role != Role::kSelf) {
      if (!c.rankArg || *c.rankArg < 0 || *c.rankArg >= n || (c.role == Role::kPeer && *c.rankArg == self)) {
        return NS_ERROR(Code::kInvalidArgument, "{}: field 'inputs': the {} (the Int before the collective name) is "
                        "not {} rank of its {}-rank group", where, c.role == Role::kRoot ? "root" : "peer",
                        c.role == Role::kRoot ? "a" : "another", n);
      }
      (c.role == Role::kRoot ? op.root : op.peer) = static_cast<int>(*c.rankArg);
    }
    std::vector<WorkOp> ops;
    if (c.kind == OpKind::kAllToAll) {
      NS_ASSIGN_OR_RETURN(auto sends, pieces(c.inSplit, c.inElems, n, where, "in_split_size", "in_msg_nelems"));
      NS_ASSIGN_OR_RETURN(auto recvs, pieces(c.outSplit, c.outElems, n, where, "out_split_size", "out_msg_nelems"));
      const bool even = std::all_of(sends.begin(), sends.end(), [&](int64_t s) { return s == sends[0]; }) &&
                        std::all_of(recvs.begin(), recvs.end(), [&](int64_t r) { return r == sends[0]; });
      op.count = static_cast<uint64_t>(sends[0]);
      if (even) ops.push_back(op);
      for (int p = 0; !even && p < n; ++p) {  // PyTorch's order: to and from each peer in turn
        for (OpKind kind : {OpKind::kSend, OpKind::kRecv}) {
          const int64_t elems = kind == OpKind::kSend ? sends[p] : recvs[p];
          if (p == self || elems == 0) continue;  // PyTorch copies the self piece locally
          WorkOp piece = op;
          piece.kind = kind, piece.peer = p, piece.count = static_cast<uint64_t>(elems);
          piece.origin = OpOrigin::kAllToAllV, piece.group = groups + 1;
          piece.computeNs = ops.empty() ? op.computeNs : 0;
          ops.push_back(piece);
        }
      }
      if (!even && ops.empty()) skip(skipped, "with nothing for another rank", op);
      groups += !even && !ops.empty();
    } else {
      ops.push_back(op);
    }
    for (WorkOp& o : ops) {
      o.bytes = opBytes(o.kind, o.count, o.type, n);
      if (o.count == 0) {
        skip(skipped, "of 0 bytes", o);
        continue;
      }
      o.seq = seq[o.commId]++;
      out->ops.push_back(o);
    }
  }
  return Status::Ok();
}

// The files' ranks and world (pytorch_et_workload.h), then every rank's operations.
Result<Workload> buildWorkload(std::vector<RankFile> files, bool oneFile, Notes notes,
                               const PyTorchEtOptions& options) {
  int declared = 0, highest = -1;
  const RankFile* declaredBy = nullptr;
  for (RankFile& f : files) {
    NS_RETURN_IF_ERROR(rankFromContent(f, options.maxWorldSize));
    if (f.rank < 0) f.rank = rankFromName(f.name), f.rankFromName = f.rank >= 0;
    if (f.declaredWorld != 0 && declared != 0 && f.declaredWorld != declared) {
      return NS_ERROR(Code::kInvalidArgument, "{}: a world of {} ranks (its default process group), but {} says {}: "
                      "the files are not of one job", f.name, f.declaredWorld, declaredBy->name, declared);
    }
    if (f.declaredWorld != 0) declared = f.declaredWorld, declaredBy = &f;
    highest = std::max(highest, f.rank);
    for (const auto& [name, members] : f.groups) {
      highest = std::max(highest, *std::max_element(members.begin(), members.end()));
    }
    for (const Call& c : f.calls) {
      std::optional<GroupSpec> g = describedGroup(f, c, options.maxWorldSize);
      if (g && !g->listed) highest = std::max(highest, g->member(g->count() - 1));
      if (c.pgSize) highest = std::max(highest, static_cast<int>(*c.pgSize) - 1);
    }
  }
  const int world = declared != 0 ? declared : std::max(highest + 1, oneFile ? 1 : static_cast<int>(files.size()));
  if (world > options.maxWorldSize) {
    return NS_ERROR(Code::kInvalidArgument, "{}: a world of {} ranks (at most {} are replayed)", files[0].name, world,
                    options.maxWorldSize);
  }
  std::vector<const RankFile*> byRank(static_cast<size_t>(world), nullptr);
  for (RankFile& f : files) {
    if (oneFile && f.rank < 0) f.rank = 0;
    if (f.rank < 0) {
      return NS_ERROR(Code::kInvalidArgument, "{}: cannot tell its rank: no all-reduce, all-gather, reduce-scatter, "
                      "all-to-all or barrier node names it, and the name ends in no number (rank-<N>.json)", f.name);
    }
    if (f.rank >= world) {
      return NS_ERROR(Code::kInvalidArgument, "{}: rank {} (from its {}), beyond the trace's {} ranks", f.name, f.rank,
                      f.rankFromName ? "name" : "content", world);
    }
    if (byRank[f.rank] != nullptr) {
      return NS_ERROR(Code::kInvalidArgument, "{} and {} are both rank {}", byRank[f.rank]->name, f.name, f.rank);
    }
    byRank[f.rank] = &f;
  }
  for (int r = 0; !oneFile && r < world; ++r) {
    if (byRank[r] == nullptr) {
      return NS_ERROR(Code::kInvalidArgument, "rank {} of {} missing: no file of rank {} among the {} files "
                      "({}, ...){}", r, world, r, files.size(), files[0].name,
                      files.size() == 1 ? " (give the file itself to replay one rank's trace on every rank)" : "");
    }
  }
  Workload workload;
  workload.worldSize = world;
  workload.onlyRank = options.onlyRank;
  workload.ranks.resize(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) workload.ranks[r].globalRank = r;
  CommTable table(world);
  size_t ops = 0, calls = 0, nodes = 0, idle = 0;
  for (const RankFile& f : files) {
    RankWork work;
    NS_RETURN_IF_ERROR(convertRank(f, f.rank, table, &notes, &work, &workload.skipped));
    calls += f.calls.size(), nodes += f.nodes, idle += f.idle;
    for (const WorkOp& op : work.ops) {  // one file for every rank: collectives on all ranks only
      const bool everyRank = !describe(op.kind).pointToPoint && table.find(op.commId).members.size() == byRank.size();
      if (oneFile && world > 1 && !everyRank) {
        return NS_ERROR(Code::kInvalidArgument, "{}: one file of a {}-rank job is replayed by every rank, which needs "
                        "every operation to be a collective on all ranks: this {}{} is not (give every rank's file)",
                        op.source, world, opKindName(op.kind),
                        op.origin == OpOrigin::kAllToAllV ? " of an uneven all-to-all" : "");
      }
    }
    for (int r = oneFile ? 0 : f.rank; r < (oneFile ? world : f.rank + 1); ++r) {
      if (options.onlyRank < 0 || options.onlyRank == r) workload.ranks[r].ops = work.ops, ops += work.ops.size();
    }
  }
  for (CommGroup& comm : table.comms()) workload.comms.push_back(std::move(comm));
  labelCommsByShape(workload);
  workload.indexComms();
  const RankFile& first = files[0];
  std::string text = fmt::format("PyTorch execution trace{}: {} ranks, {} communicators, {} operations from {} "
                                 "record_param_comms nodes ({} wait/init and {} other nodes left out)",
                                 first.schema.empty() ? "" : " (schema " + first.schema + ")", world,
                                 workload.comms.size(), ops, calls + idle, idle, nodes - calls - idle);
  if (oneFile && world > 1) text += fmt::format("; one file (rank {}): every rank replays its operations", first.rank);
  text += std::all_of(files.begin(), files.end(), timed) ? "; times from the nodes' ts and durations (Kineto-linked)"
                                                         : "; the trace has no times: no compute gaps";
  if (notes.worldGuess) text += "; operations without group information run on the whole world";
  for (const RankFile& f : files) {
    if (f.truncatedDescription) text += fmt::format("; {}: its process-group description is cut short", f.name);
  }
  for (const std::string& t : notes.byteTypes) {
    text += fmt::format("; dtype '{}' has no NCCL type: moved as bytes (uint8)", t);
  }
  workload.description = std::move(text);
  return workload;
}

// readRankFile with nlohmann's exceptions stopped here (its accessors throw on a type not checked for).
Result<RankFile> readRankFileSafe(std::string_view text, const std::string& name, const PyTorchEtOptions& options,
                                  Notes* notes) {
  try {
    return readRankFile(text, name, options, notes);
  } catch (const std::exception& e) {
    return NS_ERROR(Code::kInvalidArgument, "{}: unexpected JSON content: {}", name, e.what());
  }
}

// The first `limit` bytes of a file.
std::string readFile(const std::string& path, size_t limit, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::string text;
  if (limit == SIZE_MAX) return std::string(std::istreambuf_iterator<char>(in), {});
  text.resize(limit);
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

Result<Workload> parseFiles(const std::vector<std::string_view>& texts, const std::vector<std::string>& names,
                            bool oneFile, const PyTorchEtOptions& options) {
  if (texts.empty() || texts.size() != names.size() || texts.size() > static_cast<size_t>(options.maxWorldSize)) {
    return NS_ERROR(Code::kInvalidArgument, "{} PyTorch execution trace files: 1..{} are replayed", texts.size(),
                    options.maxWorldSize);
  }
  Notes notes;
  std::vector<RankFile> files;
  for (size_t i = 0; i < texts.size(); ++i) {
    NS_ASSIGN_OR_RETURN(RankFile f, readRankFileSafe(texts[i], names[i], options, &notes));
    files.push_back(std::move(f));
  }
  return buildWorkload(std::move(files), oneFile, std::move(notes), options);
}

}  // namespace

Result<Workload> parsePyTorchEtRank(std::string_view text, const std::string& name, const PyTorchEtOptions& options) {
  return parseFiles({text}, {name}, /*oneFile=*/true, options);
}

Result<Workload> parsePyTorchEtRanks(const std::vector<std::string_view>& texts, const std::vector<std::string>& names,
                                     const PyTorchEtOptions& options) {
  return parseFiles(texts, names, /*oneFile=*/false, options);
}

Result<Workload> loadPyTorchEtWorkload(const std::string& path, const PyTorchEtOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NS_ERROR(Code::kInvalidArgument, "{}: no such file or directory", path);
  bool ok = false;
  if (!S_ISDIR(st.st_mode)) {
    const std::string text = readFile(path, SIZE_MAX, &ok);
    if (!ok) return NS_ERROR(Code::kInvalidArgument, "{}: cannot read", path);
    return parsePyTorchEtRank(text, path, options);
  }
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return NS_ERROR(Code::kInvalidArgument, "{}: cannot list the directory", path);
  std::vector<std::string> names;
  size_t other = 0, compressed = 0;
  while (dirent* e = ::readdir(dir)) {
    const std::string n = e->d_name;
    compressed += n.size() > 8 && n.compare(n.size() - 8, 8, ".json.gz") == 0;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) names.push_back(path + "/" + n);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  Notes notes;
  std::vector<RankFile> files;  // read one by one: a file's text is dropped once its calls are decoded
  for (const std::string& n : names) {
    const bool trace = readFile(n, 4096, &ok).find("\"nodes\"") != std::string::npos;
    const std::string text = ok && trace ? readFile(n, SIZE_MAX, &ok) : "";
    if (!ok) return NS_ERROR(Code::kInvalidArgument, "{}: cannot read", n);
    if (!trace && ++other) continue;
    if (files.size() == static_cast<size_t>(options.maxWorldSize)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: more than {} trace files", path, options.maxWorldSize);
    }
    NS_ASSIGN_OR_RETURN(RankFile f, readRankFileSafe(text, n, options, &notes));
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    return NS_ERROR(Code::kInvalidArgument, "{}: no PyTorch execution trace (*.json with \"nodes\"){}", path,
                    compressed ? fmt::format("; {} *.json.gz files: gunzip them first", compressed) : "");
  }
  NS_ASSIGN_OR_RETURN(Workload workload, buildWorkload(std::move(files), /*oneFile=*/false, std::move(notes), options));
  if (other) workload.description += fmt::format("; {} other *.json files in {} ignored", other, path);
  return workload;
}

}  // namespace nshim::workload
