// libFuzzer target of the PyTorch execution-trace reader: the input is read as one file (replayed by
// every rank of its world, as `phynet x.json` does) and as both files of a two-rank directory
// (`phynet dir/` with rank-0.json and rank-1.json holding the same bytes). An accepted workload has
// one RankWork per rank of its world and every op on a communicator the workload lists; phynet's
// cross-rank check runs on it without a verdict required.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "fuzz/workload_shape_check.h"
#include "workload/pytorch_et_workload.h"
#include "workload/workload_check.h"

using namespace nshim;

// Worlds up to this size are expanded: a few bytes of input ("group_size": 65536) must not cost
// seconds of replication per run.
constexpr int kMaxWorld = 256;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  workload::PyTorchEtOptions options;
  options.maxWorldSize = kMaxWorld;
  Result<workload::Workload> one = workload::parsePyTorchEtRank(text, "fuzz.json", options);
  if (one.ok()) {
    fuzz::checkWorkloadShape(*one);
    (void)workload::checkWorkload(*one);
  }
  const std::vector<std::string_view> texts{text, text};
  const std::vector<std::string> names{"rank-0.json", "rank-1.json"};
  Result<workload::Workload> two = workload::parsePyTorchEtRanks(texts, names, options);
  if (two.ok()) {
    fuzz::checkWorkloadShape(*two);
    (void)workload::checkWorkload(*two);
  }
  return 0;
}
