// The parts of phynet's report about time and settings (docs/replay_time.md): what the recorded
// times are, the NCCL settings in force and where each came from, who the ranks waited for (arrival
// wait against data movement, the straggler), and the replay's timeline scored against a GPU-timed
// capture. Text lines for the report on stdout, and JSON members for --json (and so --html).
#pragma once

#include <cstdio>
#include <string>

#include "phynet/report.h"

namespace nshim::phynet {

// "# recorded time ..." (before the op rows: it says what the "recorded" column holds).
void printRecordedClock(FILE* out, const ReplayReport& report);
// "# NCCL settings ...", "# waiting for ranks ...", "# timeline ..." (after the end-to-end time).
void printNcclSettings(FILE* out, const ReplayReport& report);
void printWaits(FILE* out, const ReplayReport& report);
void printTimeline(FILE* out, const ReplayReport& report, int maxRows);

// The recorded column of a row or summary: GPU (or stated) time as a number, a CPU call as
// "cpu N" (never divided by), "-" when unknown.
std::string recordedText(double recordedUs, RecordedClock clock);

// ,"recorded_clock":..,"nccl_settings":[..],"nccl_settings_note":..,"straggler":{..},"timeline":{..}
std::string timeJson(const ReplayReport& report);

}  // namespace nshim::phynet
