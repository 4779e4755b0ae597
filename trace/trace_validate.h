// Consistency checks of a set of trace files, file by file and across ranks: every op belongs to a
// communicator created in its file, per-communicator sequence numbers run 0,1,2,... without gaps,
// fields fit the op (datatype, root, peer, the bytes rule), members of a communicator agree on its
// size and hold distinct ranks, and they issued the same collectives in the same order with the
// same sizes, and matching sends and receives. Messages name file, line and communicator; each kind
// of message is shown kMessagesShownPerKind times and then only counted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/trace_reader.h"

namespace nshim::trace {

// How many messages of one kind are kept; the rest of that kind are only counted.
constexpr size_t kMessagesShownPerKind = 20;

struct ValidationReport {
  struct NotShown {
    std::string kind;  // e.g. "bytes differ from the bytes rule"
    bool error = false;
    size_t count = 0;  // messages of this kind beyond the first kMessagesShownPerKind
  };
  std::vector<std::string> errors;    // the trace cannot be replayed as it is (shown ones)
  std::vector<std::string> warnings;  // replayable, but something was lost or is unusual (shown ones)
  std::vector<NotShown> notShown;     // per kind, in order of first appearance
  size_t errorCount = 0;              // every error, shown or not
  size_t warningCount = 0;
  bool ok() const { return errorCount == 0; }
};

ValidationReport validateTraceSet(const TraceSet& set);

// "0x0123456789abcdef".
std::string commIdText(uint64_t commId);

}  // namespace nshim::trace
