// The HTML page of a replay (`phynet --html FILE`), made by the page generator that `ncclshim
// report` and `ncclshim compare` run too (workload/page_generator.h).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "phynet/report.h"
#include "phynet/report_output.h"
#include "phynet/workload_names.h"
#include "workload/page_generator.h"
#include "workload/workload.h"

namespace nshim::phynet {

// Writes the page of `report` to htmlPath from the JSON report at jsonPath, or, when jsonPath is
// empty, from a temporary JSON written here and removed afterwards; the members of the workload's
// communicators go beside it (a temporary --comms file).
Status writeHtmlReport(const std::string& htmlPath, const std::string& jsonPath, const ReplayReport& report,
                       const TextHeader& header, const Workload& workload);

}  // namespace nshim::phynet
