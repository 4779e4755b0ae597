// The command-line walk shared by the trace tools (summary, diff, convert, plot): -h/--help, the
// positional inputs, the input options every command takes (tool_input.h) and "--flag value"
// options; each command supplies what is its own.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tools/inspect/tool_input.h"

namespace nshim::tools {

struct CommandLineHandlers {
  // A flag that takes no value (e.g. --csv); true when the command knows it. May be empty.
  std::function<bool(const std::string& flag)> takeSwitch;
  // A positional argument: "" when taken, else the error.
  std::function<std::string(const std::string& argument)> takeInput;
  // An option with its value: nullopt when the command does not know it, "" when taken, else the
  // error.
  std::function<std::optional<std::string>(const std::string& flag, const std::string& value)> takeOption;
};

// Walks argv[0..argc): returns "" or the first error. Stops at -h/--help with *help set. A walk that
// succeeds names its inputs as the fence activity ("reading a and b", common/main_fence.h).
std::string walkCommandLine(int argc, char** argv, InputOptions* inputOptions, bool* help,
                            const CommandLineHandlers& handlers);

// takeInput for commands with exactly one input: stores it in *input, refusing a second one.
std::string takeSingleInput(const std::string& argument, std::string* input);

}  // namespace nshim::tools
