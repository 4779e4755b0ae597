// libFuzzer target of the SimAI workload reader: parseSimAiWorkload on arbitrary text, the layout
// taken from the file as `phynet x.txt` does. An accepted workload has one RankWork per rank of its
// world, every op on a communicator the workload lists, and passes phynet's cross-rank check.
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "fuzz/workload_shape_check.h"
#include "workload/simai_workload.h"
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
  options.maxPipelineTransfers = 16;  // likewise for vpp*ga
  // SimAI's rules (the default), then the real job's (pipeline transfers and broadcasts replayed).
  for (bool realJob : {false, true}) {
    options.simai.ppPerMicrobatch = realJob;
    options.simai.noBroadcast = !realJob;
    Result<workload::Workload> workload = workload::parseSimAiWorkload(text, "fuzz.txt", options);
    if (!workload.ok()) return 0;
    fuzz::checkWorkloadShape(*workload);
    FUZZ_CHECK(workload::checkWorkload(*workload).ok());
  }
  return 0;
}
