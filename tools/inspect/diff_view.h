// What `ncclshim diff` compares: each input reduced to per-rank lists of operations in issue order,
// every op tagged with its communicator and holding its fields as text (datatype names as in
// FORMAT.md, whatever the source). A field a source does not know is "" and is not compared.
// Sources: a raw trace (every field of every op record, even where phynet would refuse the trace),
// a SimAI / AICB workload (phynet's expansion), and a phynet report CSV. A report holds one row per
// operation, not per rank, so a trace compared with a report is first reduced to the report's view
// (reportView): each collective as its communicator's rank 0 issued it and each send as a
// "sendrecv" on the sender, with the fields a report carries (op, count, dtype, peer, nranks, bytes).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/inspect/report_reader.h"
#include "tools/inspect/trace_comms.h"
#include "workload/workload.h"

namespace nshim::tools {

enum DiffField {
  kFieldOp,
  kFieldCount,
  kFieldDtype,
  kFieldRedop,
  kFieldRoot,
  kFieldPeer,
  kFieldNranks,
  kFieldBytes,
  kFieldResult,
  kNumDiffFields
};
const char* diffFieldName(int field);  // "op", "count", "dtype", "redop", "root", "peer", "nranks", "bytes", "result"

struct DiffOp {
  size_t comm = 0;   // index into DiffSide::comms
  uint64_t seq = 0;  // sequence number on the communicator (per rank)
  std::array<std::string, kNumDiffFields> fields;
  std::string where;  // "file:line" of the record or row
};

struct DiffComm {
  uint64_t id = 0;
  std::vector<int> members;  // global ranks; empty when the source does not know them
  std::string label;
};

struct DiffSide {
  std::string name;  // the path given
  std::string kind;  // "trace", "simai", "aicb", "report"
  int worldSize = 0;
  std::vector<DiffComm> comms;             // creation order; only communicators that carry ops
  std::vector<std::vector<DiffOp>> ranks;  // per global rank, issue order
  std::vector<std::string> notes;

  size_t opCount() const;
};

DiffSide diffSideFromTrace(const TraceView& view, const std::string& name);
DiffSide diffSideFromWorkload(const workload::Workload& workload, const std::string& name, const std::string& kind);
// The report's iteration `iteration`; communicator members and ranks come from `reference` (the
// other input, already reduced with reportView): rows of a communicator it lacks are noted and left out.
DiffSide diffSideFromReport(const ReplayReportCsv& report, const DiffSide& reference, int iteration);
DiffSide reportView(const DiffSide& side);

// "allreduce count 32768 float32 sum bytes 131072" from the known fields.
std::string describeDiffOp(const DiffOp& op);

}  // namespace nshim::tools
