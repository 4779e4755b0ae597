// libFuzzer target of the AICB CSV reader: parseAicbWorkload on arbitrary text, the layout
// taken from the file as `phynet x.csv` does. An accepted workload has one RankWork per rank of its
// world and every op on a communicator the workload lists; phynet's cross-rank check runs on it
// too, without a verdict required: a file whose isend/irecv rows do not pair up parses, and that
// check is where phynet refuses it.
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "fuzz/workload_shape_check.h"
#include "workload/aicb_workload.h"
#include "workload/workload_check.h"

using namespace nshim;

// Worlds up to this size are expanded (larger ones are refused by the same check that refuses more
// than 65536 ranks in phynet): a few bytes of input must not cost seconds of expansion per run.
constexpr int kMaxWorld = 256;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  workload::WorkloadOptions options;
  options.maxWorldSize = kMaxWorld;
  Result<workload::Workload> workload = workload::parseAicbWorkload(text, "fuzz.csv", options);
  if (!workload.ok()) return 0;
  fuzz::checkWorkloadShape(*workload);
  (void)workload::checkWorkload(*workload);
  return 0;
}
