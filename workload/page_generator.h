// The report page generator, tools/report/report_main.py (`phynet --html`, `ncclshim report` and
// `ncclshim compare`), installed with its modules as ncclshim_report/report_main.py next to the
// binaries, run with the first Python 3 that has matplotlib; and the side file of communicators it
// reads. The charts are matplotlib's SVG inside one self-contained page (docs/TOOLS.md).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

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

// A new empty file /tmp/phynet-report-XXXXXX.json; `what` names the caller in the error.
Result<std::string> temporaryReportFile(const char* what);

}  // namespace nshim::workload
