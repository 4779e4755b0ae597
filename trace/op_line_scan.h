// Fast path of the trace reader for op lines exactly as trace_format.cc writes them: the keys in the
// writer's order and spelling, no spaces, hex ids of 16 lower-case digits, integers in canonical
// form. Such a line is read in one pass with no tokenising and no key lookups. Any other line
// (another writer, a hand edit, a bad value, an optional key such as redop_id) is declined, and the
// reader parses it with the general JSON parser, which gives the same record or names the bad field;
// the fast path therefore accepts only what the general path accepts, with the same values.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/trace_record.h"

namespace nshim::trace {

// True and `n`, `out` filled when `line` (without '\n'; a trailing '\r' is accepted) is an op line in
// the writer's exact layout whose fields all pass the reader's range checks; false otherwise, with
// `n` and `out` unspecified.
bool scanWriterOpLine(std::string_view line, uint64_t* n, OpRecord* out);

}  // namespace nshim::trace
