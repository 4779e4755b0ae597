// Summary lines on a trace's parallel layout (job_shape_lines.h).
#include "tools/inspect/job_shape_lines.h"

#include <fmt/format.h>

#include <fstream>

#include "workload/job_shape.h"

namespace nshim::tools {

std::vector<std::string> jobShapeLines(const std::string& input, const WorkloadDistribution& d) {
  std::vector<std::string> lines;
  std::vector<workload::CommUse> uses;
  for (const CommSummary& c : d.comms) {
    if (c.members.empty()) continue;
    workload::CommUse use;
    use.id = c.id;
    use.members = c.members;
    use.carriesOps = c.calls > 0;
    use.pointToPointOnly = c.collectiveCalls == 0;
    use.exchanges = c.exchangeCalls > 0;
    use.evenExchange = c.evenExchange;
    use.sendsToSelf = c.sendsToSelf;
    uses.push_back(std::move(use));
  }
  Result<workload::JobShape> shape = workload::recoverJobShape(d.worldSize, uses);
  if (shape.ok()) {
    lines.push_back(fmt::format("shape: {}, from the communicators' members", shape->toString()));
  } else {
    std::string why = shape.status().message();
    if (size_t cut = why.find(". "); cut != std::string::npos) why.resize(cut);
    lines.push_back("shape: not recovered: " + why);
  }
  std::ifstream origin(input + "/" + kScaleOriginFile);
  for (std::string line; origin && std::getline(origin, line) && lines.size() < 16;) {
    if (!line.empty()) lines.push_back("scaled " + line);
  }
  return lines;
}

}  // namespace nshim::tools
