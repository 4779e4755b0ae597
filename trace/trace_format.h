// The JSON Lines spelling of trace records (FORMAT.md): names of ops, datatypes, reduction ops and
// communicator events, and formatters that write one line ('\n' included) into fixed memory. The
// formatters allocate nothing and are async-signal-safe; the reader parses what they write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/trace_record.h"

namespace nshim::trace {

// Longest line the writer produces (an op line is about 400 bytes); the reader accepts up to
// kMaxLineBytes so that later writers may add fields.
constexpr size_t kFormatLineBytes = 4096;  // a header with nccl_env (<= 2 x kNcclEnvBytes escaped) fits
constexpr size_t kMaxLineBytes = 4096;

// Names used in the files. Unknown values give "unknown".
const char* opName(OpCode op);
const char* commEventName(CommEvent event);
const char* datatypeName(int32_t datatype);  // "none" for kNoDatatype
// "none" for kNoRedOp, "sum".."avg" for built-ins, "premulsum" when preMulSum, else "user".
const char* redopName(int32_t redop, bool preMulSum);

// Inverses; false when the name is unknown.
bool parseOpName(std::string_view name, OpCode* out);
bool parseCommEventName(std::string_view name, CommEvent* out);
bool parseDatatypeName(std::string_view name, int32_t* out);
// Built-in names and "none" only ("premulsum"/"user" need the numeric redop_id).
bool parseRedopName(std::string_view name, int32_t* out);

// Each returns the line length (0 if `capacity` was too small: nothing usable was written).
// `n` is the record's order number in its file (the writer's, FORMAT.md).
size_t formatCommLine(const CommRecord& record, uint64_t n, char* out, size_t capacity);
size_t formatOpLine(const OpRecord& record, uint64_t n, char* out, size_t capacity);
size_t formatHeaderLine(const TraceHeader& header, char* out, size_t capacity);
size_t formatFooterLine(const TraceFooter& footer, char* out, size_t capacity);
// Version 3: an iteration mark (ncclshimMarkStep).
size_t formatStepLine(const StepRecord& record, uint64_t n, char* out, size_t capacity);
// {"type":"drops","dropped":<new>,"total":<total>}: written as soon as drops are noticed.
size_t formatDropsLine(uint64_t dropped, uint64_t total, char* out, size_t capacity);

// Version 2: NCCL's decisions from the profiler plugin (trace_format_nccl.cc).
const char* taskKindName(TaskKind kind);  // "coll", "p2p"
bool parseTaskKindName(std::string_view name, TaskKind* out);
size_t formatTaskLine(const TaskRecord& record, uint64_t n, char* out, size_t capacity);
size_t formatProxyLine(const ProxyRecord& record, uint64_t n, char* out, size_t capacity);

// Version 3: the header's nccl_env. Encodes `env` as "NAME=VALUE\n" entries into `out` (NUL
// terminated) while they fit; returns how many were left out (too long, or a control character in
// the value). decodeNcclEnv reads it back.
uint32_t encodeNcclEnv(const std::vector<std::pair<std::string, std::string>>& env, char* out, size_t size);
std::vector<std::pair<std::string, std::string>> decodeNcclEnv(const char* text, size_t size);

// Copies a C string into a fixed char array, cut to size-1 bytes, NUL-terminated.
void copyFixed(char* dst, size_t size, std::string_view src);

}  // namespace nshim::trace
