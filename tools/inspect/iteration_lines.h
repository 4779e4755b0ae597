// The lines `ncclshim summary` prints about a trace's training iterations (workload/
// iteration_period.h): how many, the calls and bytes of one, or that there is no period.
#pragma once

#include <string>
#include <vector>

#include "workload/workload.h"

namespace nshim::tools {

std::vector<std::string> iterationLines(const workload::Workload& workload);

}  // namespace nshim::tools
