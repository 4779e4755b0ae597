// The collectives `ncclshim perf` measures: for each, its descriptor (common/collective_descriptor.h:
// nccl-tests' name, buffers, size and busbw factor), the NCCL call, and the expected result of every
// element for the data check.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <string>

#include "common/collective_descriptor.h"

namespace nshim::perf {

struct PerfCollective {
  const CollectiveDescriptor& collective;  // "sendrecv" is kSend's: a send and a receive of count each
  ncclResult_t (*run)(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                      ncclComm_t comm);

  const char* name() const { return collective.ncclTestsName; }
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
