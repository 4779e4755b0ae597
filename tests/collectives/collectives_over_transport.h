// The one collective test body, run over every transport: the matrix of cases (collective x count
// x data type x reduction, roots and in-place varied) and its run on ranks as processes over any
// transport that connects through a unique id (TCP, ibverbs); the in-process transport runs the
// same matrix on threads (runCasesOnRanks). Each transport's test file only says how to connect
// and which part of the matrix its medium affords.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "common/status.h"
#include "tests/collectives/collective_check.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/core/transport.h"

namespace nshim::testing {

struct MatrixShape {
  bool everyTypeAndOp = true;  // false: float32 sum only
  // Above this count, only sum plus one other reduction per type (the large counts are slow).
  size_t everyOpUpToCount = std::numeric_limits<size_t>::max();
};

// Every collective on every count (outer loop), x every data type x reduction where the shape says;
// case i has root i % nranks (rooted collectives) and is in place when i is odd (not all-to-all).
std::vector<CollectiveCase> collectiveMatrix(int nranks, const std::vector<size_t>& counts, MatrixShape shape = {});

// Connects rank `rank` of `nranks` to the job of `id` over one transport.
using ConnectTransport = std::function<Result<std::unique_ptr<Transport>>(const UniqueId& id, int rank, int nranks)>;

// Runs `cases` in order on `nranks` ranks as processes (each connected by `connect`), every element
// checked; with `checkBytes`, each rank's payload bytes sent per case also equal expectedSentBytes.
// Fails the current test case for every rank that failed (its error is printed on stderr).
void runCasesInProcesses(int nranks, const ConnectTransport& connect, const std::vector<CollectiveCase>& cases,
                         const CollectiveOptions& options, bool checkBytes);

}  // namespace nshim::testing
