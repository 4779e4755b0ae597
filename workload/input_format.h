// The replay's input formats and how a path is told apart: phynet and the `ncclshim` file commands
// decide the same way. By content first, then by name: a directory of *.jsonl files is an ncclshim
// trace, of NAME.<rank>.et files a Chakra trace, of *.json files with a "nodes" list PyTorch execution
// traces; a file starting with a protobuf varint length and a GlobalMetadata version string is Chakra's
// (also a NAME prefix whose NAME.0.et exists, as ASTRA-sim names its input), a JSON object with
// "schema" and "nodes" a PyTorch execution trace, a JSON Lines header an ncclshim trace; a .txt file is
// SimAI text and a .csv (or a line naming comm_type) AICB. What it cannot tell it says, with what it saw.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nshim::workload {

enum class InputFormat { kAuto, kTrace, kSimAi, kAicb, kChakra, kPyTorchEt };

const char* inputFormatName(InputFormat format);  // "trace", "simai", "aicb", "chakra", "pytorch-et"
// "auto", or one of the names above; false for anything else.
bool parseInputFormat(std::string_view text, InputFormat* out);
// The names --from / --format accept, for messages: "auto, trace, simai, aicb, chakra, pytorch-et".
const char* inputFormatChoices();

// What `path` holds (never kAuto), or an error that says what it saw.
Result<InputFormat> detectInputFormat(const std::string& path);

// True when `bytes` (a file's first bytes) begin as a Chakra file does: a varint length, then a
// GlobalMetadata whose first field is a short printable version string.
bool looksLikeChakra(std::string_view bytes);
// True when `bytes` begin a JSON object that has "schema" and "nodes" keys near its start.
bool looksLikePyTorchEt(std::string_view bytes);

// Pieces the readers share with detection:
// "NAME.<rank>.et" (rank at most 9 digits) -> NAME and rank; false for other names.
bool splitEtName(std::string_view file, std::string* prefix, int64_t* rank);
// A protobuf varint at *pos (advanced past it); false when cut short or longer than 64 bits.
bool readVarint(std::string_view bytes, size_t* pos, uint64_t* value);
// The entries of a directory ("." and ".." included), sorted; an error naming it when it cannot be listed.
Result<std::vector<std::string>> listDirectory(const std::string& dir);

}  // namespace nshim::workload
