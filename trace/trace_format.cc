// Formatting of trace lines and the name tables shared by the writer and the reader. Key order and
// spelling here are the schema of FORMAT.md: change them only together with that file.
#include "trace/trace_format.h"

#include <algorithm>
#include <cstring>

#include "trace/line_buffer.h"

namespace nshim::trace {
namespace {

constexpr std::string_view kOpNames[kNumOpCodes] = {"allreduce",     "broadcast", "reduce",     "allgather",
                                                    "reducescatter", "alltoall",  "gather",     "scatter",
                                                    "send",          "recv",      "groupstart", "groupend"};
constexpr std::string_view kEventNames[kNumCommEvents] = {"init", "split", "destroy", "abort", "finalize"};
constexpr std::string_view kDatatypeNames[kNumDatatypes] = {"int8",    "uint8",    "int32",      "uint32",
                                                            "int64",   "uint64",   "float16",    "float32",
                                                            "float64", "bfloat16", "float8e4m3", "float8e5m2"};
constexpr std::string_view kRedopNames[kNumBuiltinRedOps] = {"sum", "prod", "max", "min", "avg"};

// Tables of string_views (not char pointers): a lookup compares lengths first and never calls strlen.
template <size_t N>
int findName(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return -1;
}

// Ends a line: closes the object and adds '\n'; returns its length or 0 on overflow.
size_t finish(LineBuffer& line) {
  line.put('}');
  line.put('\n');
  return line.overflow() ? 0 : line.size();
}

}  // namespace

const char* opName(OpCode op) {
  auto i = static_cast<uint32_t>(op);
  return i < kNumOpCodes ? kOpNames[i].data() : "unknown";
}

const char* commEventName(CommEvent event) {
  auto i = static_cast<uint32_t>(event);
  return i < kNumCommEvents ? kEventNames[i].data() : "unknown";
}

const char* datatypeName(int32_t datatype) {
  if (datatype == kNoDatatype) return "none";
  return datatype >= 0 && datatype < kNumDatatypes ? kDatatypeNames[datatype].data() : "unknown";
}

const char* redopName(int32_t redop, bool preMulSum) {
  if (preMulSum) return "premulsum";
  if (redop == kNoRedOp) return "none";
  if (redop >= 0 && redop < kNumBuiltinRedOps) return kRedopNames[redop].data();
  return "user";
}

bool parseOpName(std::string_view name, OpCode* out) {
  int i = findName(kOpNames, name);
  if (i < 0) return false;
  *out = static_cast<OpCode>(i);
  return true;
}

bool parseCommEventName(std::string_view name, CommEvent* out) {
  int i = findName(kEventNames, name);
  if (i < 0) return false;
  *out = static_cast<CommEvent>(i);
  return true;
}

bool parseDatatypeName(std::string_view name, int32_t* out) {
  if (name == "none") {
    *out = kNoDatatype;
    return true;
  }
  int i = findName(kDatatypeNames, name);
  if (i < 0) return false;
  *out = i;
  return true;
}

bool parseRedopName(std::string_view name, int32_t* out) {
  if (name == "none") {
    *out = kNoRedOp;
    return true;
  }
  int i = findName(kRedopNames, name);
  if (i < 0) return false;
  *out = i;
  return true;
}

size_t formatCommLine(const CommRecord& r, uint64_t n, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"comm\"");
  line.key("n");
  line.putUint(n);
  line.key("event");
  line.put('"');
  line.put(commEventName(r.event));
  line.put('"');
  line.key("comm");
  line.put('"');
  line.putHex64(r.commId);
  line.put('"');
  line.key("parent");
  line.put('"');
  line.putHex64(r.parentId);
  line.put('"');
  line.key("split_seq");
  line.putUint(r.splitSeq);
  line.key("color");
  line.putInt(r.color);
  line.key("key");
  line.putInt(r.key);
  line.key("nranks");
  line.putInt(r.nranks);
  line.key("rank");
  line.putInt(r.rank);
  line.key("global_rank");
  line.putInt(r.globalRank);
  line.key("host");
  line.putJsonString(r.host, sizeof(r.host));
  line.key("pid");
  line.putInt(r.pid);
  line.key("device");
  line.putInt(r.cudaDevice);
  line.key("t_ns");
  line.putInt(r.timestampNs);
  return finish(line);
}

size_t formatOpLine(const OpRecord& r, uint64_t n, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  bool preMulSum = (r.flags & kOpFlagPreMulSum) != 0;
  line.put('{');
  line.key("type");
  line.put("\"op\"");
  line.key("n");
  line.putUint(n);
  line.key("comm");
  line.put('"');
  line.putHex64(r.commId);
  line.put('"');
  line.key("rank");
  line.putInt(r.rank);
  line.key("seq");
  line.putUint(r.seq);
  line.key("op");
  line.put('"');
  line.put(opName(r.op));
  line.put('"');
  line.key("count");
  line.putUint(r.count);
  line.key("dtype");
  line.put('"');
  line.put(datatypeName(r.datatype));
  line.put('"');
  line.key("redop");
  line.put('"');
  line.put(redopName(r.redop, preMulSum));
  line.put('"');
  if (preMulSum || r.redop >= kNumBuiltinRedOps || r.redop < kNoRedOp) {
    line.key("redop_id");
    line.putInt(r.redop);
  }
  line.key("root");
  line.putInt(r.root);
  line.key("peer");
  line.putInt(r.peer);
  line.key("nranks");
  line.putInt(r.nranks);
  line.key("bytes");
  line.putUint(r.bytes);
  line.key("stream");
  line.put('"');
  line.putHex64(r.stream);
  line.put('"');
  line.key("group");
  line.putInt(r.groupDepth);
  line.key("t_start_ns");
  line.putInt(r.hostStartNs);
  line.key("t_end_ns");
  line.putInt(r.hostEndNs);
  line.key("gpu_start_ns");
  line.putInt(r.gpuStartNs);
  line.key("gpu_end_ns");
  line.putInt(r.gpuEndNs);
  line.key("flags");
  line.putUint(r.flags);
  line.key("result");
  line.putInt(r.result);
  return finish(line);
}

size_t formatHeaderLine(const TraceHeader& h, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"header\"");
  line.key("format");
  line.put("\"ncclshim-trace\"");
  line.key("version");
  line.putInt(h.version);
  line.key("abi");
  line.putInt(h.abi);
  line.key("host");
  line.putJsonString(h.host, sizeof(h.host));
  line.key("pid");
  line.putInt(h.pid);
  line.key("ppid");
  line.putInt(h.ppid);
  line.key("global_rank");
  line.putInt(h.globalRank);
  line.key("clock");
  line.put("\"CLOCK_MONOTONIC\"");
  line.key("start_realtime_ns");
  line.putInt(h.startRealtimeNs);
  line.key("start_monotonic_ns");
  line.putInt(h.startMonotonicNs);
  line.key("ring_records");
  line.putUint(h.ringRecords);
  line.key("job");
  line.putJsonString(h.job, sizeof(h.job));
  if (h.version >= 3) {  // the NCCL settings of the capturing process, an object of strings
    line.key("nccl_env");
    line.put('{');
    bool first = true;
    for (const auto& [name, value] : decodeNcclEnv(h.ncclEnv, sizeof(h.ncclEnv))) {
      if (!first) line.put(',');
      first = false;
      line.putJsonString(name.c_str(), name.size());
      line.put(':');
      line.putJsonString(value.c_str(), value.size());
    }
    line.put('}');
    if (h.ncclEnvLeftOut > 0) {
      line.key("nccl_env_left_out");
      line.putUint(h.ncclEnvLeftOut);
    }
  }
  return finish(line);
}

uint32_t encodeNcclEnv(const std::vector<std::pair<std::string, std::string>>& env, char* out, size_t size) {
  size_t used = 0;
  uint32_t leftOut = 0;
  if (size > 0) out[0] = '\0';
  for (const auto& [name, value] : env) {
    bool control = false;
    for (char c : name + value) control = control || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    const size_t need = name.size() + 1 + value.size() + 1;
    if (control || name.find('=') != std::string::npos || used + need + 1 > size) {
      ++leftOut;
      continue;
    }
    std::memcpy(out + used, name.data(), name.size());
    out[used + name.size()] = '=';
    std::memcpy(out + used + name.size() + 1, value.data(), value.size());
    out[used + need - 1] = '\n';
    used += need;
    out[used] = '\0';
  }
  return leftOut;
}

std::vector<std::pair<std::string, std::string>> decodeNcclEnv(const char* text, size_t size) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view rest(text, strnlen(text, size));
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view entry = rest.substr(0, end);
    const size_t eq = entry.find('=');
    if (eq != std::string_view::npos)
      out.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return out;
}

size_t formatFooterLine(const TraceFooter& f, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"footer\"");
  line.key("records");
  line.putUint(f.records);
  line.key("comms");
  line.putUint(f.comms);
  line.key("ops");
  line.putUint(f.ops);
  line.key("dropped");
  line.putUint(f.dropped);
  line.key("invalid");
  line.putUint(f.invalid);
  line.key("nccl_tasks");
  line.putUint(f.tasks);
  line.key("nccl_proxies");
  line.putUint(f.proxies);
  line.key("steps");
  line.putUint(f.steps);
  line.key("global_rank");
  line.putInt(f.globalRank);
  line.key("reason");
  line.putJsonString(f.reason, sizeof(f.reason));
  line.key("signal");
  line.putInt(f.signal);
  line.key("end_realtime_ns");
  line.putInt(f.endRealtimeNs);
  line.key("end_monotonic_ns");
  line.putInt(f.endMonotonicNs);
  if (f.cut[0] != '\0') {
    line.key("cut");
    line.putJsonString(f.cut, sizeof(f.cut));
    line.key("max_bytes");
    line.putUint(f.maxBytes);
  }
  return finish(line);
}

size_t formatStepLine(const StepRecord& r, uint64_t n, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"step\"");
  line.key("n");
  line.putUint(n);
  line.key("step");
  line.putUint(r.step);
  line.key("t_ns");
  line.putInt(r.timestampNs);
  return finish(line);
}

size_t formatDropsLine(uint64_t dropped, uint64_t total, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"drops\"");
  line.key("dropped");
  line.putUint(dropped);
  line.key("total");
  line.putUint(total);
  return finish(line);
}

void copyFixed(char* dst, size_t size, std::string_view src) {
  if (size == 0) return;
  size_t n = src.size() < size - 1 ? src.size() : size - 1;
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  for (size_t i = n; i < size; ++i) dst[i] = '\0';
}

}  // namespace nshim::trace
