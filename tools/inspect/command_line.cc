// The shared command-line walk of the trace tools (command_line.h).
#include "tools/inspect/command_line.h"

#include <fmt/format.h>

#include <vector>

#include "common/main_fence.h"

namespace nshim::tools {

std::string walkCommandLine(int argc, char** argv, InputOptions* inputOptions, bool* help,
                            const CommandLineHandlers& handlers) {
  std::vector<std::string> inputs;
  for (int i = 0; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      *help = true;
      return "";
    }
    if (handlers.takeSwitch && handlers.takeSwitch(flag)) continue;
    if (flag.empty() || flag[0] != '-') {
      std::string error = handlers.takeInput(flag);
      if (!error.empty()) return error;
      inputs.push_back(flag);
      continue;
    }
    if (i + 1 >= argc) return fmt::format("option {} needs a value", flag);
    std::string value = argv[++i];
    std::string error;
    if (takeInputOption(flag, value, inputOptions, &error)) {
      if (!error.empty()) return error;
      continue;
    }
    std::optional<std::string> taken = handlers.takeOption(flag, value);
    if (!taken) return fmt::format("unknown option {}", flag);
    if (!taken->empty()) return *taken;
  }
  // What the command works on from here, for the main's fence (common/main_fence.h).
  std::string activity;
  for (const std::string& input : inputs) activity += (activity.empty() ? "reading " : " and ") + input;
  setFenceActivity(activity);
  return "";
}

std::string takeSingleInput(const std::string& argument, std::string* input) {
  if (!input->empty()) return fmt::format("more than one input ('{}' and '{}')", *input, argument);
  *input = argument;
  return "";
}

}  // namespace nshim::tools
