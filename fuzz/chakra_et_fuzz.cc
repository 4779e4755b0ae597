// libFuzzer target of the Chakra execution-trace reader: the input is the file of both ranks of a
// two-rank trace (as bytes on disk: framing, GlobalMetadata, Nodes), read with and without a
// comm-group file as `phynet NAME` does. An accepted workload has one RankWork per rank and every op
// on a communicator the workload lists; phynet's cross-rank check runs on it without a verdict.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "fuzz/workload_shape_check.h"
#include "workload/chakra_workload.h"
#include "workload/workload_check.h"

using namespace nshim;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> files{bytes, bytes};
  const std::vector<std::string> names{"fuzz.0.et", "fuzz.1.et"};
  for (const char* groups : {"", R"({"0": [0, 1], "1": [0], "2": [1]})"}) {
    Result<workload::Workload> workload =
        workload::parseChakraWorkload(files, names, groups, workload::ChakraOptions{});
    if (!workload.ok()) continue;
    FUZZ_CHECK(workload->worldSize == 2);
    fuzz::checkWorkloadShape(*workload);
    (void)workload::checkWorkload(*workload);
  }
  return 0;
}
