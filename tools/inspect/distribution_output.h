// Writing a distribution (distribution.h) as a text table for people, CSV for spreadsheets and
// plots, or one JSON document for scripts. The columns are documented in docs/TOOLS.md.
#pragma once

#include <cstdio>
#include <string>

#include "common/status.h"
#include "tools/inspect/distribution.h"

namespace nshim::tools {

enum class SummaryTable { kDistribution, kComms, kRanks, kDecisions };  // which table CSV carries

void printWorkloadText(FILE* out, const std::string& source, const WorkloadDistribution& d);
void printWorkloadCsv(FILE* out, const WorkloadDistribution& d, SummaryTable table);
void printWorkloadJson(FILE* out, const std::string& source, const std::string& kind, const WorkloadDistribution& d);

void printReportText(FILE* out, const std::string& source, const ReportDistribution& d);
void printReportCsv(FILE* out, const ReportDistribution& d);
void printReportJson(FILE* out, const std::string& source, const ReportDistribution& d);

// "0,1,2,3" or, past 8 members, "0,2,4,...,30 (16 ranks)".
std::string membersText(const std::vector<int>& members);

}  // namespace nshim::tools
