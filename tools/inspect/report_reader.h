// Reader of phynet's per-op report CSV (`phynet --report FILE`, written by phynet/report_output.cc):
// one row per replayed operation and measured iteration. Columns are found by name, so a later
// phynet that adds columns still reads; op, group, comm, nranks, iteration, seq, count, type, bytes,
// time_us and busbw_gbps are required. Empty numeric fields (unknown recorded time, efficiency) read
// as -1. Errors name the file, the line and the column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nshim::tools {

struct ReportRow {
  int line = 0;       // line in the CSV (from 1)
  std::string op;     // allreduce ... or "sendrecv"
  std::string group;  // communicator label
  uint64_t comm = 0;
  int nranks = 0;
  int iteration = 0;
  uint64_t seq = 0;
  uint64_t count = 0;
  std::string type;  // datatype name
  uint64_t bytes = 0;
  int sender = -1;  // sendrecv: the global ranks of "a->b"; else -1
  int receiver = -1;
  double timeUs = 0;
  double algbw = -1;       // GB/s
  double busbw = 0;        // GB/s
  double recordedUs = -1;  // -1 when unknown
};

struct ReplayReportCsv {
  std::string path;
  std::vector<ReportRow> rows;  // file order (by iteration, then start time)
};

// The first line of phynet's report CSV starts with this.
constexpr std::string_view kReportCsvHeaderStart = "op,group,comm,nranks,";

Result<ReplayReportCsv> readReportCsv(const std::string& path);
Result<ReplayReportCsv> parseReportCsv(std::string_view text, const std::string& name);

}  // namespace nshim::tools
