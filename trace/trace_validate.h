// Consistency checks of a set of trace files, file by file and across ranks: every op belongs to a
// communicator created in its file, per-communicator sequence numbers run 0,1,2,... without gaps,
// fields fit the op (datatype, root, peer, the bytes rule), members of a communicator agree on its
// size and hold distinct ranks, and they issued the same collectives in the same order with the
// same sizes, and matching sends and receives. Messages name file, line and communicator.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

namespace nshim::trace {

struct ValidationReport {
  std::vector<std::string> errors;    // the trace cannot be replayed as it is
  std::vector<std::string> warnings;  // replayable, but something was lost or is unusual
  size_t suppressed = 0;              // messages beyond the cap
  bool ok() const { return errors.empty(); }
};

ValidationReport validateTraceSet(const TraceSet& set, size_t maxMessages = 50);

// "0x0123456789abcdef".
std::string commIdText(uint64_t commId);

}  // namespace nshim::trace
