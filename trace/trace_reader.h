// Reading ncclshim trace files (FORMAT.md) back into the record structs: one file, a text buffer
// (for fuzzing), or a directory of per-rank files. Malformed input gives an error naming the file,
// the line and the field; a file cut by a killed process keeps every complete line and reports the
// cut. Sizes are bounded (line length, field count, records) and no exception escapes. A UTF-8 byte
// order mark at the start of a file and CRLF line ends are accepted. Records are kept in vectors of
// vectors reserved from the input's size (the capacity beyond the records read is never touched, so
// it costs address space, not memory), or streamed in batches (ReadOptions::onOps).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "trace/json_line.h"
#include "trace/trace_record.h"

namespace nshim::trace {

struct CommEntry {
  uint64_t n = 0;    // the line's order number in its file
  int64_t line = 0;  // line number in its file (from 1)
  CommRecord record{};
};

struct OpEntry {
  uint64_t n = 0;
  int64_t line = 0;
  OpRecord record{};
};

// Version 2: NCCL's decisions (FORMAT.md nccl_task / nccl_proxy).
struct TaskEntry {
  uint64_t n = 0;
  int64_t line = 0;
  TaskRecord record{};
};

struct ProxyEntry {
  uint64_t n = 0;
  int64_t line = 0;
  ProxyRecord record{};
};

// Version 3: an iteration mark (FORMAT.md `step`).
struct StepEntry {
  uint64_t n = 0;
  int64_t line = 0;
  uint64_t step = 0;  // marks the process made before this one
  int64_t timestampNs = 0;
};

struct TraceFile {
  std::string path;
  TraceHeader header{};
  std::vector<CommEntry> comms;     // in file order
  std::vector<OpEntry> ops;         // in file order (sort by n for exact recording order)
  std::vector<TaskEntry> tasks;     // version 2: nccl_task lines, in file order
  std::vector<ProxyEntry> proxies;  // version 2: nccl_proxy lines, in file order
  // Version 3: the header's nccl_env (the capturing process's NCCL settings), in the file's order,
  // and how many the writer left out (nccl_env_left_out).
  std::vector<std::pair<std::string, std::string>> ncclEnv;
  uint64_t ncclEnvLeftOut = 0;
  std::vector<StepEntry> steps;  // version 3: step lines (iteration marks), in file order
  bool hasFooter = false;
  TraceFooter footer{};         // the last footer line
  bool endsWithFooter = false;  // the last complete line is a footer: closed cleanly
  uint64_t dropped = 0;         // records the writer reported lost (drops lines / footer)
  uint64_t ignoredLines = 0;    // lines of a type this reader does not know (newer writer)
  int64_t lines = 0;            // complete lines
  bool truncated = false;       // the file ends inside a line (its writer was killed or its disk full)
  int64_t cutLine = 0;          // number of that partial line
  uint64_t cutBytes = 0;        // bytes of it that were present
  uint64_t opsNotKept = 0;      // op records streamed to ReadOptions::onOps or skipped (skipOps)

  // Footer's, else header's, else the first comm record's global rank; kNoRank if none.
  int32_t globalRank() const;
  // "clean", "cut after line N: no footer (...)" or "cut at line N after K bytes (...)".
  std::string endDescription() const;
};

struct TraceSet {
  std::vector<TraceFile> files;  // sorted by global rank (unknown last), then path
};

struct ReadOptions {
  uint64_t maxRecords = uint64_t(1) << 28;  // per file
  uint64_t maxFiles = 1 << 16;              // per directory
  // Structure only: header, comm, footer and drops lines are read; op lines are counted
  // (opsNotKept) and, when they start as the writer writes them ({"type":"op",), not parsed.
  bool skipOps = false;
  // >= 0: as skipOps, except in the file whose header names this global rank (a replay rank reads
  // every file's structure and only its own file's records). A file whose header names no rank has
  // its op lines skipped.
  int keepOpsOfRank = -1;
  // Op lines in the writer's exact layout are read by scanWriterOpLine (op_line_scan.h); false sends
  // every line through the general JSON parser (tests compare the two; the benchmark times both).
  // The environment variable NCCLSHIM_TRACE_GENERAL_PARSER (any value) turns it off too.
  bool opFastPath = true;
  // Streaming: op records go to onOps in batches of up to opBatch (file order) instead of into
  // TraceFile::ops; `file` is the file read so far (its path and header; comms and ops stay empty
  // until the end). An error from onOps ends the read with that error.
  std::function<Status(const TraceFile& file, std::vector<OpEntry>& batch)> onOps;
  size_t opBatch = 1 << 16;
};

// Incremental parser behind the readers: feed complete lines (without '\n') in order, then the
// trailing partial line if any, then finish().
class TraceParser {
 public:
  TraceParser(std::string name, ReadOptions options);
  Status addLine(std::string_view line);
  void addCut(std::string_view partial);
  Result<TraceFile> finish();
  // Reserves room for as many op records as `inputBytes` of text can hold (address space only).
  void reserveForInput(uint64_t inputBytes);
  // Records accepted so far (comm + op, kept or not).
  uint64_t records() const {
    return comms_.size() + ops_.size() + file_.opsNotKept + batch_.size() + file_.tasks.size() + file_.proxies.size() +
           file_.steps.size();
  }

 private:
  Status parseLine(std::string_view line);
  Status parseHeader();
  Status parseComm();
  Status parseOp();
  Status parseFooter();
  Status parseNcclEnv(std::string_view object);  // the header's nested nccl_env
  Status parseDrops();
  Status parseStep();
  Status parseTask();  // trace_reader_nccl.cc
  Status parseProxy();
  Status keepOp(const OpEntry& entry);  // into ops_, or the streaming batch
  Status flushBatch();
  bool skippingOps() const;  // skipOps, or keepOpsOfRank names another rank
  void reserveOps();         // room for as many op records as inputBytes_ of text can hold

  ReadOptions options_;
  TraceFile file_;
  bool sawHeader_ = false;
  FlatJsonObject object_;
  std::vector<CommEntry> comms_;
  std::vector<OpEntry> ops_;
  std::vector<OpEntry> batch_;  // streaming (options_.onOps): ops not handed over yet
  uint64_t inputBytes_ = 0;     // reserveForInput's
};

Result<TraceFile> parseTrace(std::string_view text, const std::string& name, const ReadOptions& options = {});
Result<TraceFile> readTraceFile(const std::string& path, const ReadOptions& options = {});
// Names of trace files in a directory: "*.jsonl", "*.jsonl.zst", and either with ".part" (still being
// written, or its process ended without a footer: read as far as it goes, and validate says so).
bool isTraceFileName(std::string_view name);
// Every regular trace file of `dir` (isTraceFileName; zstd inflated as read), read on up to one thread per core (on this thread alone
// when onOps is set); an error if there is none.
Result<TraceSet> readTraceDir(const std::string& dir, const ReadOptions& options = {});
// A directory (readTraceDir) or one file (a set of one).
Result<TraceSet> readTracePath(const std::string& path, const ReadOptions& options = {});

}  // namespace nshim::trace
