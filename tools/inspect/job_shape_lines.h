// The lines `ncclshim summary` prints about a trace's parallel layout: the shape recovered from its
// communicators (workload/job_shape.h) or why it was not, and, for a directory written by
// `ncclshim scale`, the captured job it was scaled from (its scale.txt).
#pragma once

#include <string>
#include <vector>

#include "tools/inspect/distribution.h"

namespace nshim::tools {

// Name of the file `ncclshim scale` leaves beside the traces it writes.
constexpr const char* kScaleOriginFile = "scale.txt";

std::vector<std::string> jobShapeLines(const std::string& input, const WorkloadDistribution& d);

}  // namespace nshim::tools
