// The parts of phynet's report about the job's settings and timeline (docs/replay_time.md): the
// NCCL settings in force and where each came from, and the replay's timeline scored against a
// GPU-timed capture. Text lines for the report on stdout, and JSON members for --json (and so --html).
#pragma once

#include <cstdio>
#include <string>

#include "phynet/report.h"

namespace nshim::phynet {

// "# NCCL settings ...", "# job timeline ..." (after the end-to-end time).
void printNcclSettings(FILE* out, const ReplayReport& report);
void printTimeline(FILE* out, const ReplayReport& report, int maxRows);

// ,"nccl_settings":[..],"nccl_settings_note":..,"timeline":{..}
std::string timeJson(const ReplayReport& report);

}  // namespace nshim::phynet
