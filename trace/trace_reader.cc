// Trace reader: splits input into lines (bounded), parses each as a flat JSON object and converts it
// by its "type" into the record structs with every field range-checked. Op lines as the writer lays
// them out are read in one pass by scanWriterOpLine; any other line takes the general parser. Errors
// are prefixed with "<file>:<line>: " so that a bad field is found at once.
#include "trace/trace_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "common/parallel_for.h"
#include "common/settings.h"
#include "trace/op_line_scan.h"
#include "trace/reader_fields.h"
#include "trace/trace_format.h"
#include "trace/zstd_stream.h"

namespace nshim::trace {
using namespace reader_detail;
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
constexpr std::string_view kOpLineStart = "{\"type\":\"op\",";  // how the writer starts op lines

}  // namespace

int32_t TraceFile::globalRank() const {
  if (hasFooter && footer.globalRank != kNoRank) return footer.globalRank;
  if (header.globalRank != kNoRank) return header.globalRank;
  for (const CommEntry& c : comms) {
    if (c.record.globalRank != kNoRank) return c.record.globalRank;
  }
  return kNoRank;
}

std::string TraceFile::endDescription() const {
  if (truncated) {
    return fmt::format(
        "cut at line {} after {} bytes (its writer stopped inside that line: killed, or its disk full; "
        "{} complete lines kept)",
        cutLine, cutBytes, lines);
  }
  if (!endsWithFooter) {
    return fmt::format(
        "cut after line {}: no footer (the writer ended without a final flush: killed, a crash, _exit, "
        "or it could not write more)",
        lines);
  }
  return "clean";
}

TraceParser::TraceParser(std::string name, ReadOptions options) : options_(options) {
  file_.path = std::move(name);
  if (settingBool(Setting::NCCLSHIM_TRACE_GENERAL_PARSER)) options_.opFastPath = false;
}

Status TraceParser::addLine(std::string_view line) {
  if (file_.lines == 0 && line.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    line.remove_prefix(kByteOrderMark.size());
  }
  ++file_.lines;
  Status s = parseLine(line);
  if (!s.ok()) { return Status(s.code(), fmt::format("{}:{}: {}", file_.path, file_.lines, s.message())); }
  return Status::Ok();
}

void TraceParser::addCut(std::string_view partial) {
  if (partial.empty()) return;
  file_.truncated = true;
  file_.cutLine = file_.lines + 1;
  file_.cutBytes = partial.size();
}

Result<TraceFile> TraceParser::finish() {
  if (!sawHeader_ && file_.lines == 0 && file_.truncated) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}:1: no complete header line: cut after {} bytes (its writer could "
                    "not write more?)",
                    file_.path, file_.cutBytes);
  }
  if (!sawHeader_ && file_.lines == 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}:1: no complete header line: the file is empty (its writer could "
                    "not write it?)",
                    file_.path);
  }
  if (!sawHeader_) {
    return NS_ERROR(Code::kInvalidArgument, "{}:1: no complete header line (not an ncclshim trace?)", file_.path);
  }
  NS_RETURN_IF_ERROR(flushBatch());
  file_.comms = std::move(comms_);
  file_.ops = std::move(ops_);
  return std::move(file_);
}

bool TraceParser::skippingOps() const {
  return options_.skipOps || (options_.keepOpsOfRank >= 0 && file_.header.globalRank != options_.keepOpsOfRank);
}

void TraceParser::reserveForInput(uint64_t inputBytes) {
  inputBytes_ = inputBytes;
  if (options_.onOps || options_.skipOps || options_.keepOpsOfRank >= 0) return;  // keepOpsOfRank: at the header
  reserveOps();
}

void TraceParser::reserveOps() {
  // No op line the reader accepts is shorter than this (the required keys alone are longer), so the
  // vector never reallocates; a reservation is capped at a quarter of the machine's memory.
  constexpr uint64_t kShortestOpLine = 128;
  const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t records =
      std::min<uint64_t>({inputBytes_ / kShortestOpLine + 16, options_.maxRecords, physical / 4 / sizeof(OpEntry)});
  ops_.reserve(static_cast<size_t>(records));
}

Status TraceParser::flushBatch() {
  if (batch_.empty()) return Status::Ok();
  file_.opsNotKept += batch_.size();
  Status s = options_.onOps(file_, batch_);
  batch_.clear();
  return s;
}

Status TraceParser::parseLine(std::string_view line) {
  if (line.size() > kMaxLineBytes) {
    return Status(Code::kInvalidArgument, fmt::format("line longer than {} bytes", kMaxLineBytes));
  }
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    if (!sawHeader_) return Status(Code::kInvalidArgument, "empty first line: expected the header");
    return Status::Ok();  // blank lines carry nothing
  }
  const bool writerOpLine = sawHeader_ && line.substr(0, kOpLineStart.size()) == kOpLineStart;
  const bool skipOps = skippingOps();
  if (writerOpLine && options_.opFastPath && !skipOps && records() < options_.maxRecords) {
    OpEntry entry;
    if (scanWriterOpLine(line, &entry.n, &entry.record)) {
      file_.endsWithFooter = false;
      entry.line = file_.lines;
      return keepOp(entry);
    }
  }
  const bool fastSkip = skipOps && writerOpLine;
  std::string headerRest, ncclEnv;  // the header holds one nested object (version 3): read apart
  bool hasNcclEnv = false;
  if (!sawHeader_) {
    NS_RETURN_IF_ERROR(takeObjectField(line, "nccl_env", &headerRest, &ncclEnv, &hasNcclEnv));
    if (hasNcclEnv) line = headerRest;
  }
  if (!fastSkip) NS_RETURN_IF_ERROR(parseFlatJson(line, &object_));
  std::string_view type = "op";
  if (!fastSkip) NS_RETURN_IF_ERROR(getStringView(object_, "type", &type));
  if (!sawHeader_) {
    if (type != "header") return Status(Code::kInvalidArgument, "field 'type': the first line must be the header");
    NS_RETURN_IF_ERROR(parseHeader());
    return hasNcclEnv ? parseNcclEnv(ncclEnv) : Status::Ok();
  }
  file_.endsWithFooter = false;
  if (records() >= options_.maxRecords) {
    return Status(Code::kInvalidArgument, fmt::format("more than {} records", options_.maxRecords));
  }
  if (type == "op" && skipOps) {
    ++file_.opsNotKept;
    return Status::Ok();
  }
  if (type == "op") return parseOp();
  if (type == "comm") return parseComm();
  if (type == "footer") return parseFooter();
  if (type == "drops") return parseDrops();
  if (type == "step" && file_.header.version >= 3) return parseStep();
  if (type == "nccl_task" && file_.header.version >= 2) return parseTask();
  if (type == "nccl_proxy" && file_.header.version >= 2) return parseProxy();
  if (type == "header") return Status(Code::kInvalidArgument, "field 'type': a second header");
  ++file_.ignoredLines;  // a record type of a newer writer (FORMAT.md: compatibility)
  return Status::Ok();
}

Status TraceParser::parseHeader() {
  std::string_view format;
  NS_RETURN_IF_ERROR(getStringView(object_, "format", &format));
  if (format != "ncclshim-trace") return badName("format", format);
  TraceHeader& h = file_.header;
  h.globalRank = kNoRank;
  NS_RETURN_IF_ERROR(getInto(object_, "version", 1, kI32Max, &h.version));
  if (h.version > kTraceFormatVersion) {
    return Status(Code::kInvalidArgument,
                  fmt::format("field 'version': {} is newer than this reader ({})", h.version, kTraceFormatVersion));
  }
  NS_RETURN_IF_ERROR(getFixedString(object_, "host", h.host, sizeof(h.host)));
  if (object_.find("job")) NS_RETURN_IF_ERROR(getFixedString(object_, "job", h.job, sizeof(h.job)));
  NS_RETURN_IF_ERROR(getInto(object_, "pid", 0, INT64_MAX, &h.pid));
  NS_RETURN_IF_ERROR(getInto(object_, "abi", 0, kI32Max, &h.abi, true));
  NS_RETURN_IF_ERROR(getInto(object_, "ppid", 0, INT64_MAX, &h.ppid, true));
  NS_RETURN_IF_ERROR(getInto(object_, "global_rank", -1, kI32Max, &h.globalRank, true));
  NS_RETURN_IF_ERROR(getInto(object_, "start_realtime_ns", INT64_MIN, INT64_MAX, &h.startRealtimeNs, true));
  NS_RETURN_IF_ERROR(getInto(object_, "start_monotonic_ns", INT64_MIN, INT64_MAX, &h.startMonotonicNs, true));
  NS_RETURN_IF_ERROR(getInto(object_, "ring_records", 0, UINT32_MAX, &h.ringRecords, true));
  sawHeader_ = true;
  if (options_.keepOpsOfRank >= 0 && h.globalRank == options_.keepOpsOfRank && !options_.onOps) reserveOps();
  return Status::Ok();
}

Status TraceParser::parseNcclEnv(std::string_view text) {
  FlatJsonObject env;
  Status parsed = parseFlatJson(text, &env);
  if (!parsed.ok()) return Status(Code::kInvalidArgument, fmt::format("field 'nccl_env': {}", parsed.message()));
  for (size_t i = 0; i < env.size(); ++i) {
    const JsonField& f = env.field(i);
    if (f.key.substr(0, 5) != "NCCL_" || f.type != JsonType::kString) {
      return Status(Code::kInvalidArgument, fmt::format("field 'nccl_env': '{}' is not an NCCL_* name with a string "
                                                        "value",
                                                        f.key));
    }
    file_.ncclEnv.emplace_back(std::string(f.key), std::string(f.text));
  }
  if (!object_.find("nccl_env_left_out")) return Status::Ok();
  return getUint64(object_, "nccl_env_left_out", &file_.ncclEnvLeftOut);
}

Status TraceParser::parseComm() {
  CommEntry entry;
  entry.line = file_.lines;
  CommRecord& r = entry.record = makeCommRecord(CommEvent::kInit);
  std::string_view name;
  NS_RETURN_IF_ERROR(getUint64(object_, "n", &entry.n));
  NS_RETURN_IF_ERROR(getStringView(object_, "event", &name));
  if (!parseCommEventName(name, &r.event)) return badName("event", name);
  NS_RETURN_IF_ERROR(getHex64(object_, "comm", &r.commId));
  NS_RETURN_IF_ERROR(getHex64(object_, "parent", &r.parentId));
  NS_RETURN_IF_ERROR(getUint64(object_, "split_seq", &r.splitSeq));
  NS_RETURN_IF_ERROR(getInto(object_, "color", kI32Min, kI32Max, &r.color));
  NS_RETURN_IF_ERROR(getInto(object_, "key", kI32Min, kI32Max, &r.key));
  NS_RETURN_IF_ERROR(getInto(object_, "nranks", 0, kI32Max, &r.nranks));
  NS_RETURN_IF_ERROR(getInto(object_, "rank", -1, kI32Max, &r.rank));
  NS_RETURN_IF_ERROR(getInto(object_, "global_rank", -1, kI32Max, &r.globalRank));
  NS_RETURN_IF_ERROR(getFixedString(object_, "host", r.host, sizeof(r.host)));
  NS_RETURN_IF_ERROR(getInto(object_, "pid", 0, kI32Max, &r.pid));
  NS_RETURN_IF_ERROR(getInto(object_, "device", -1, kI32Max, &r.cudaDevice));
  NS_RETURN_IF_ERROR(getInto(object_, "t_ns", INT64_MIN, INT64_MAX, &r.timestampNs));
  comms_.push_back(entry);
  return Status::Ok();
}

Status TraceParser::parseOp() {
  OpEntry entry;
  entry.line = file_.lines;
  OpRecord& r = entry.record = makeOpRecord(OpCode::kAllReduce);
  std::string_view name;
  NS_RETURN_IF_ERROR(getUint64(object_, "n", &entry.n));
  NS_RETURN_IF_ERROR(getHex64(object_, "comm", &r.commId));
  NS_RETURN_IF_ERROR(getInto(object_, "rank", -1, kI32Max, &r.rank));
  NS_RETURN_IF_ERROR(getUint64(object_, "seq", &r.seq));
  NS_RETURN_IF_ERROR(getStringView(object_, "op", &name));
  if (!parseOpName(name, &r.op)) return badName("op", name);
  NS_RETURN_IF_ERROR(getUint64(object_, "count", &r.count));
  NS_RETURN_IF_ERROR(getStringView(object_, "dtype", &name));
  if (!parseDatatypeName(name, &r.datatype)) return badName("dtype", name);
  NS_RETURN_IF_ERROR(getInto(object_, "flags", 0, UINT32_MAX, &r.flags));
  NS_RETURN_IF_ERROR(getStringView(object_, "redop", &name));
  if (object_.find("redop_id")) {
    NS_RETURN_IF_ERROR(getInto(object_, "redop_id", kI32Min, kI32Max, &r.redop));
  } else if (!parseRedopName(name, &r.redop)) {
    return badName("redop", std::string(name) + (name == "premulsum" || name == "user" ? "' without 'redop_id" : ""));
  }
  NS_RETURN_IF_ERROR(getInto(object_, "root", -1, kI32Max, &r.root));
  NS_RETURN_IF_ERROR(getInto(object_, "peer", -1, kI32Max, &r.peer));
  NS_RETURN_IF_ERROR(getInto(object_, "nranks", 0, kI32Max, &r.nranks, true));
  NS_RETURN_IF_ERROR(getUint64(object_, "bytes", &r.bytes));
  NS_RETURN_IF_ERROR(getHex64(object_, "stream", &r.stream));
  NS_RETURN_IF_ERROR(getInto(object_, "group", 0, kI32Max, &r.groupDepth));
  NS_RETURN_IF_ERROR(getInto(object_, "t_start_ns", INT64_MIN, INT64_MAX, &r.hostStartNs));
  NS_RETURN_IF_ERROR(getInto(object_, "t_end_ns", INT64_MIN, INT64_MAX, &r.hostEndNs));
  NS_RETURN_IF_ERROR(getInto(object_, "gpu_start_ns", INT64_MIN, INT64_MAX, &r.gpuStartNs, true));
  NS_RETURN_IF_ERROR(getInto(object_, "gpu_end_ns", INT64_MIN, INT64_MAX, &r.gpuEndNs, true));
  NS_RETURN_IF_ERROR(getInto(object_, "result", kI32Min, kI32Max, &r.result, true));
  return keepOp(entry);
}

Status TraceParser::keepOp(const OpEntry& entry) {
  const OpRecord& r = entry.record;
  uint64_t bytes = 0;
  if (!traceBytesFit(r.op, r.count, r.datatype, r.nranks, &bytes)) {
    return Status(Code::kInvalidArgument,
                  fmt::format("field 'count': {} of {} {} elements ({} bytes each) on {} ranks is more than 2^64 bytes",
                              opName(r.op), r.count, datatypeName(r.datatype), datatypeSize(r.datatype), r.nranks));
  }
  if (!options_.onOps) {
    ops_.push_back(entry);
    return Status::Ok();
  }
  batch_.push_back(entry);
  return batch_.size() >= options_.opBatch ? flushBatch() : Status::Ok();
}

Status TraceParser::parseFooter() {
  TraceFooter& f = file_.footer;
  f = TraceFooter{};
  f.globalRank = kNoRank;
  NS_RETURN_IF_ERROR(getUint64(object_, "records", &f.records));
  NS_RETURN_IF_ERROR(getUint64(object_, "dropped", &f.dropped));
  for (auto [key, field] : {std::pair{"comms", &f.comms},
                            {"ops", &f.ops},
                            {"invalid", &f.invalid},
                            {"nccl_tasks", &f.tasks},
                            {"nccl_proxies", &f.proxies},
                            {"steps", &f.steps},
                            {"max_bytes", &f.maxBytes}}) {
    if (object_.find(key)) NS_RETURN_IF_ERROR(getUint64(object_, key, field));
  }
  NS_RETURN_IF_ERROR(getInto(object_, "global_rank", -1, kI32Max, &f.globalRank, true));
  NS_RETURN_IF_ERROR(getInto(object_, "signal", 0, 1024, &f.signal, true));
  NS_RETURN_IF_ERROR(getInto(object_, "end_realtime_ns", INT64_MIN, INT64_MAX, &f.endRealtimeNs, true));
  NS_RETURN_IF_ERROR(getInto(object_, "end_monotonic_ns", INT64_MIN, INT64_MAX, &f.endMonotonicNs, true));
  if (object_.find("reason")) NS_RETURN_IF_ERROR(getFixedString(object_, "reason", f.reason, sizeof(f.reason)));
  if (object_.find("cut")) NS_RETURN_IF_ERROR(getFixedString(object_, "cut", f.cut, sizeof(f.cut)));
  file_.hasFooter = true;
  file_.endsWithFooter = true;
  file_.dropped = std::max(file_.dropped, f.dropped);
  return Status::Ok();
}

Status TraceParser::parseStep() {
  StepEntry entry;
  entry.line = file_.lines;
  NS_RETURN_IF_ERROR(getUint64(object_, "n", &entry.n));
  NS_RETURN_IF_ERROR(getUint64(object_, "step", &entry.step));
  NS_RETURN_IF_ERROR(getInto(object_, "t_ns", INT64_MIN, INT64_MAX, &entry.timestampNs));
  file_.steps.push_back(entry);
  return Status::Ok();
}

Status TraceParser::parseDrops() {
  uint64_t total = 0;
  NS_RETURN_IF_ERROR(getUint64(object_, "total", &total));
  file_.dropped = std::max(file_.dropped, total);
  return Status::Ok();
}

Result<TraceFile> parseTrace(std::string_view text, const std::string& name, const ReadOptions& options) {
  TraceParser parser(name, options);
  parser.reserveForInput(text.size());
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      parser.addCut(text.substr(start));
      break;
    }
    NS_RETURN_IF_ERROR(parser.addLine(text.substr(start, end - start)));
    start = end + 1;
  }
  return parser.finish();
}

bool isTraceFileName(std::string_view name) {
  auto endsWith = [&](std::string_view tail) {
    return name.size() > tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  return endsWith(".jsonl") || endsWith(".jsonl.zst") || endsWith(".jsonl.part") || endsWith(".jsonl.zst.part");
}

namespace {

// The text of a trace file: its bytes as stored, or inflated when they are a zstd stream
// (NCCLSHIM_TRACE_COMPRESS=zstd, `.jsonl.zst`), whatever the file's name.
class TraceText {
 public:
  explicit TraceText(int fd) : fd_(fd) {}
  // Reads the first bytes: whether they are zstd. False with *error set.
  bool start(std::string* error) {
    if (!refill(error)) return false;
    const auto* head = reinterpret_cast<const unsigned char*>(in_.data());
    if (!startsWithZstdMagic(head, inLen_)) return true;
    if (!zstdAvailable()) {
      *error = std::string("compressed with zstd, and ") + zstdMissingText();
      return false;
    }
    zstd_ = ZstdDecompressor::create();
    if (zstd_ == nullptr) *error = "out of memory for zstd";
    return zstd_ != nullptr;
  }
  bool compressed() const { return zstd_ != nullptr; }

  // Up to `capacity` bytes into `out`: the count, 0 at the end, -1 with *error set. After start().
  ssize_t read(char* out, size_t capacity, std::string* error) {
    if (zstd_ == nullptr) {
      if (inPos_ < inLen_) {  // the bytes read to look for zstd's magic
        const size_t n = std::min(capacity, inLen_ - inPos_);
        std::memcpy(out, in_.data() + inPos_, n);
        inPos_ += n;
        return static_cast<ssize_t>(n);
      }
      for (;;) {
        const ssize_t n = ::read(fd_, out, capacity);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) *error = std::string("read failed: ") + std::strerror(errno);
        return n;
      }
    }
    for (;;) {
      if (inPos_ == inLen_ && !eof_ && !refill(error)) return -1;
      if (inPos_ == inLen_ && eof_) return 0;  // a stream cut inside a frame ends at its last whole block
      size_t produced = 0;
      const std::string failure = zstd_->step(in_.data(), inLen_, &inPos_, out, capacity, &produced);
      if (!failure.empty()) {
        *error = "damaged zstd stream: " + failure;
        return -1;
      }
      if (produced > 0) return static_cast<ssize_t>(produced);
    }
  }

 private:
  bool refill(std::string* error) {
    in_.resize(size_t(1) << 20);
    inPos_ = inLen_ = 0;
    for (;;) {
      const ssize_t n = ::read(fd_, in_.data(), in_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *error = std::string("read failed: ") + std::strerror(errno);
        return false;
      }
      inLen_ = static_cast<size_t>(n);
      eof_ = n == 0;
      return true;
    }
  }

  int fd_;
  bool eof_ = false;
  std::unique_ptr<ZstdDecompressor> zstd_;
  std::vector<char> in_;
  size_t inPos_ = 0, inLen_ = 0;
};

}  // namespace

Result<TraceFile> readTraceFile(const std::string& path, const ReadOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "{}: cannot open: {}", path, std::strerror(errno));
  struct CloseOnExit {
    int fd;
    ~CloseOnExit() { ::close(fd); }
  } closer{fd};  // also when an allocation below throws
  TraceParser parser(path, options);
  TraceText text(fd);
  std::string readError;
  if (!text.start(&readError)) return NS_ERROR(Code::kSystemError, "{}: {}", path, readError);
  // A compressed file holds many times its size in text (about 20x for traces): room for that is
  // address space, not memory, until it is used.
  constexpr uint64_t kZstdTextPerByte = 32;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    parser.reserveForInput(static_cast<uint64_t>(st.st_size) * (text.compressed() ? kZstdTextPerByte : 1));
  }
  // Lines are parsed where they lie in the buffer; only the unfinished last line of a read moves
  // (to the front) before the next read appends to it.
  constexpr size_t kReadBytes = size_t(1) << 20;
  std::vector<char> buffer(kReadBytes + kMaxLineBytes + 1);
  size_t held = 0;  // bytes of an unfinished line at the front of buffer
  int64_t lineNo = 0;
  Status status;
  while (status.ok()) {
    ssize_t n = text.read(buffer.data() + held, kReadBytes, &readError);
    if (n < 0) {
      status = NS_ERROR(Code::kSystemError, "{}: {}", path, readError);
      break;
    }
    if (n == 0) break;
    const char* begin = buffer.data();
    const char* end = begin + held + static_cast<size_t>(n);
    const char* line = begin;
    const char* scan = begin + held;  // the held bytes hold no '\n'
    while (const char* newline = static_cast<const char*>(std::memchr(scan, '\n', static_cast<size_t>(end - scan)))) {
      if (static_cast<size_t>(newline - line) > kMaxLineBytes) break;  // reported below
      ++lineNo;
      status = parser.addLine(std::string_view(line, static_cast<size_t>(newline - line)));
      if (!status.ok()) break;
      line = scan = newline + 1;
    }
    if (!status.ok()) break;
    held = static_cast<size_t>(end - line);
    const char* newline = static_cast<const char*>(std::memchr(line, '\n', held));
    if (held > kMaxLineBytes || (newline != nullptr && static_cast<size_t>(newline - line) > kMaxLineBytes)) {
      status = Status(Code::kInvalidArgument,
                      fmt::format("{}:{}: line longer than {} bytes", path, lineNo + 1, kMaxLineBytes));
      break;
    }
    std::memmove(buffer.data(), line, held);
  }
  if (!status.ok()) return status;
  parser.addCut(std::string_view(buffer.data(), held));
  return parser.finish();
}

namespace {

// Reads `paths` on up to one thread per core (files are independent; a streaming onOps callback
// is not assumed thread-safe, so streaming reads stay on this thread). The result is in `paths`
// order; on failure, the error of the first failing path.
Result<std::vector<TraceFile>> readFilesInParallel(const std::vector<std::string>& paths, const ReadOptions& options) {
  std::vector<Result<TraceFile>> results(paths.size(), Status(Code::kInternal, "not read"));
  parallelFor(
      paths.size(),
      [&](size_t i) {
        try {
          results[i] = readTraceFile(paths[i], options);
        } catch (const std::bad_alloc&) {
          results[i] = NS_ERROR(Code::kSystemError, "{}: out of memory while reading it", paths[i]);
        }
      },
      options.onOps ? 1 : 16);
  std::vector<TraceFile> files;
  files.reserve(paths.size());
  for (Result<TraceFile>& r : results) {
    if (!r.ok()) return r.status();
    files.push_back(std::move(r).value());
  }
  return files;
}

}  // namespace

Result<TraceSet> readTraceDir(const std::string& dir, const ReadOptions& options) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return NS_ERROR(Code::kSystemError, "{}: cannot open directory: {}", dir, std::strerror(errno));
  std::vector<std::string> paths;
  while (dirent* entry = readdir(d)) {
    if (!isTraceFileName(entry->d_name)) continue;
    std::string_view name = entry->d_name;
    std::string path = dir + "/" + std::string(name);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (paths.size() >= options.maxFiles) {
      closedir(d);
      return NS_ERROR(Code::kInvalidArgument, "{}: more than {} trace files", dir, options.maxFiles);
    }
    paths.push_back(std::move(path));
  }
  closedir(d);
  if (paths.empty())
    return NS_ERROR(Code::kInvalidArgument, "{}: no trace files (*.jsonl, *.jsonl.zst, or either .part)", dir);
  std::sort(paths.begin(), paths.end());  // the first error in path order is the one reported
  NS_ASSIGN_OR_RETURN(std::vector<TraceFile> files, readFilesInParallel(paths, options));
  TraceSet set;
  set.files = std::move(files);
  std::sort(set.files.begin(), set.files.end(), [](const TraceFile& a, const TraceFile& b) {
    uint32_t ra = static_cast<uint32_t>(a.globalRank()), rb = static_cast<uint32_t>(b.globalRank());
    return ra != rb ? ra < rb : a.path < b.path;  // kNoRank (-1) sorts last as UINT32_MAX
  });
  return set;
}

Result<TraceSet> readTracePath(const std::string& path, const ReadOptions& options) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return NS_ERROR(Code::kSystemError, "{}: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return readTraceDir(path, options);
  auto file = readTraceFile(path, options);
  if (!file.ok()) return file.status();
  TraceSet set;
  set.files.push_back(std::move(file).value());
  return set;
}

}  // namespace nshim::trace
