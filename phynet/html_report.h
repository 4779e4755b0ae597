// The HTML page of a replay (`phynet --html FILE`; `ncclshim report` and `ncclshim compare` run
// the same generator): tools/report/report_main.py, installed with its modules as
// ncclshim_report/report_main.py next to the binaries, run with the first Python 3 that has
// matplotlib. The charts are matplotlib's SVG inside one self-contained page (docs/TOOLS.md).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "phynet/report.h"
#include "phynet/report_output.h"
#include "workload/workload.h"

namespace nshim::phynet {

// Exit statuses of the generator besides 0 (done): 1 compare found a ratio below --fail-below,
// 2 bad input (it said why, naming the file), 3 no Python 3 with matplotlib (nothing written).
constexpr int kPageBelowThreshold = 1;
constexpr int kPageBadInput = 2;
constexpr int kPageNoMatplotlib = 3;

// Runs `report_main.py <args...>` and returns its exit status. When the script or a suitable
// Python is missing it says so on stderr, prefixed with `who`, and returns 2 or 3. `needMatplotlib`
// false (compare without a page) accepts any Python 3.
int runPageGenerator(const std::vector<std::string>& args, bool needMatplotlib, const char* who);

// {"comms":[{"comm":"0x..","group":"tp","nranks":2,"members":[0,1]},...]}: the communicators'
// members, which the report JSON does not carry, for the page's timeline per rank (the generator's
// --comms FILE).
Status writeCommsJson(const std::string& path, const Workload& workload);

// Writes the page of `report` to htmlPath from the JSON report at jsonPath, or, when jsonPath is
// empty, from a temporary JSON written here and removed afterwards; the members of the workload's
// communicators go beside it (a temporary --comms file).
Status writeHtmlReport(const std::string& htmlPath, const std::string& jsonPath, const ReplayReport& report,
                       const TextHeader& header, const Workload& workload);

}  // namespace nshim::phynet
