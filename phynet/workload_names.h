// phynet replays the workload model (workload/): its types and functions are used here by their
// plain names, as they were when they lived in phynet/. This is the one place that says so.
#pragma once

namespace nshim::workload {}

namespace nshim::phynet {
using namespace ::nshim::workload;
}  // namespace nshim::phynet
