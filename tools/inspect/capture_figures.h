// `ncclshim compare TRACE REPORT.json`: what the capture itself says about time, for the comparison
// with its replay (tools/report/report_capture.py). Per op (a collective across its members, a send
// with its receive: phynet's report rows) the longest member's recorded time, when that time is
// GPU time; per rank the capture's communication time, exposed time and overlapping op pairs
// (workload/timeline_figures.h), whole and per training iteration found in its ops. Written as one
// JSON document for the page generator.
#pragma once

#include <string>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::tools {

// {"capture":PATH,"world_size":N,"recorded_clock":..,"ops":[{"op","group","nranks","bytes","time_us"}],
//  "timeline":{"captured":..,"note":..,"capture_overlap_pairs":..,"ranks":[..],"iterations":[..]}}
Status writeCaptureFigures(const std::string& path, const std::string& source, const workload::Workload& workload);

}  // namespace nshim::tools
