// phynet's options as CLI11 options (common/command_line.h): each one's name, value, check and
// one description for the generated --help, grouped as the help shows them (input, replay, several
// jobs, report). replay_options.cc builds the command from them.
#pragma once

#include <CLI/CLI.hpp>

#include "phynet/replay_options.h"

namespace nshim::phynet {

// Adds every option of phynet to `app`, each storing into *options (which must outlive the parse).
void addReplayOptions(CLI::App& app, ReplayOptions* options);

// Its parts in replay_run_options.cc: how the workload runs (pacing, repetitions, filters, memory,
// checks), and where the results go (several jobs, the report).
void addRunOptions(CLI::App& app, ReplayOptions* options);
void addJobAndReportOptions(CLI::App& app, ReplayOptions* options);

}  // namespace nshim::phynet
