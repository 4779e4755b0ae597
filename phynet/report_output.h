// Writing the replay report: an nccl-tests-like text table (per-op rows, the summary, end-to-end
// time and per-rank counters) on a stream, one CSV row per op, and a JSON document.
#pragma once

#include <cstdio>
#include <string>

#include "common/json_text.h"
#include "common/status.h"
#include "phynet/report.h"
#include "phynet/workload_names.h"
#include "workload/size_bucket.h"

namespace nshim::phynet {

struct TextHeader {
  std::string transport;
  std::string pace;
  double scale = 1.0;
  bool verified = false;  // --verify ran: every result byte was checked
  bool gpuWork = false;   // NCCL's GPU work was done on the CPU (--verify, --gpu-work)
};

// Per-op rows (the first `maxRows`), the summary, the end-to-end time and the per-rank counters
// (ranks whose counters are equal on one line, "# ranks 0-7: ...").
void printReport(FILE* out, const ReplayReport& report, const TextHeader& header, int maxRows);

Status writeCsvReport(const std::string& path, const ReplayReport& report);
Status writeJsonReport(const std::string& path, const ReplayReport& report, const TextHeader& header);

}  // namespace nshim::phynet
