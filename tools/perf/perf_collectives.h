// The collectives `ncclshim perf` measures: for each, nccl-tests' size conventions, its busbw
// factor, the NCCL call, and the expected result of every element for the data check.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>

namespace nshim::perf {

struct PerfCollective {
  const char* name;
  bool hasReduction;
  bool hasRoot;
  bool supportsInPlace;
  // busbw = algbw * factor(nranks)
  double (*busFactor)(int nranks);
  // Full-buffer elements `total` -> per-rank send/recv element counts and the NCCL count argument.
  void (*shape)(size_t total, int nranks, int rank, int root, size_t* sendElems, size_t* recvElems,
                size_t* ncclCount);
  ncclResult_t (*run)(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                      ncclComm_t comm);
};

// nullptr when the name is unknown.
const PerfCollective* findPerfCollective(const std::string& name);

// Where this rank's input block starts in the pattern, and what element `i` of the output should be
// (as a double), for the check. `inPlace` is handled by the runner (same pattern).
double perfInputValue(int rank, size_t index, bool forProduct);
// Returns the expected output element i on `rank`; *defined = false where the output is not written
// on this rank (e.g. reduce on a non-root).
double perfExpectedValue(const PerfCollective& c, const std::string& redOp, ncclDataType_t type, int nranks, int rank,
                         int root, size_t total, size_t index, bool* defined);

}  // namespace nshim::perf
