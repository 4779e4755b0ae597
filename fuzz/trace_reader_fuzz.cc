// libFuzzer target of the trace reader: parseTrace on arbitrary bytes (one rank's .jsonl file).
// Properties of an accepted file: records are counted once, a cut is reported with its bytes, and
// the accepted set goes through the cross-rank validator and phynet's trace-to-workload conversion
// and check (the path `phynet <trace>` takes) without crashing.
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"
#include "workload/trace_workload.h"
#include "workload/workload_check.h"

using namespace nshim;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  trace::ReadOptions options;
  options.maxRecords = 4096;
  Result<trace::TraceFile> file = trace::parseTrace(text, "fuzz/rank0.jsonl", options);
  if (!file.ok()) return 0;
  FUZZ_CHECK(file->comms.size() + file->ops.size() <= options.maxRecords);
  FUZZ_CHECK(!file->truncated || file->cutBytes > 0);
  FUZZ_CHECK(file->lines >= 0 && static_cast<uint64_t>(file->lines) <= size);
  (void)file->globalRank();
  (void)file->endDescription();
  trace::TraceSet set;
  set.files.push_back(std::move(file).value());
  (void)trace::validateTraceSet(set);
  Result<workload::Workload> workload = workload::workloadFromTraceSet(set);
  if (workload.ok()) (void)workload::checkWorkload(*workload);
  return 0;
}
