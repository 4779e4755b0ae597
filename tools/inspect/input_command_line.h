// The input options every file command of `ncclshim` takes (--from, --comm-group, --world-size, --tp,
// --ep, --pp, --simai-rules: how to read a trace / SimAI / AICB / Chakra input, as phynet's options),
// as CLI11 options (common/command_line.h) in the help's group "input options".
#pragma once

#include <CLI/CLI.hpp>

#include "tools/inspect/tool_input.h"

namespace nshim::tools {

// Adds them to `app`, each storing into *options (which must outlive the parse).
void addInputOptions(CLI::App& app, InputOptions* options);

}  // namespace nshim::tools
