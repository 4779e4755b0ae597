// NCCLSHIM_CHECK_CALLS=1 (off by default; on in the shim's process tests): before each collective
// the ranks allgather their call's signature {collective, count, datatype, reduction, root} and
// compare them, so that ranks that disagree fail the call on every rank, naming the ranks and
// their calls, where the collective itself would have given wrong data silently (a float and an
// int32 allreduce of equal bytes) or failed only at the deadline. A separate exchange rather than a
// header on the collective's first message: it works the same for every algorithm, protocol and
// transport without touching them, and with the setting off the bytes on the wire stay NCCL's.
// Its cost is one allgather of 16 bytes per rank per collective (README, "Using the shim GPU-free").
#pragma once

#include <cstdint>

#include "common/collective_descriptor.h"
#include "common/status.h"
#include "libshim/shim_comm.h"

namespace nshim {

// One rank's call, as every rank of the communicator must make it.
struct CallSignature {
  uint8_t kind = 0;  // CollectiveKind
  uint8_t type = 0;  // DataType
  int8_t op = -1;    // ReduceKind (PreMulSum scalars may differ by rank); -1 when the collective does not reduce
  uint8_t unused = 0;
  int32_t root = -1;  // -1 when it has no root
  uint64_t count = 0;
};
static_assert(sizeof(CallSignature) == 16, "the exchanged signature has no padding");

CallSignature signatureOf(CollectiveKind kind, DataType type, size_t count, int op = -1, int root = -1);

// NCCLSHIM_CHECK_CALLS (0/1, default 0), read once.
bool callChecksOn();

// Exchanges `mine` with every rank of `comm` (connected, under its operation lock) and compares.
// Ranks that disagree: kInvalidUsage on every rank, naming them ("rank 1 called allreduce with
// float/sum, count 4, but rank 0 allreduce with int32/sum, count 4"), recorded as the communicator's
// asynchronous error (ShimComm::recordCallMismatch).
Status checkSameCall(ShimComm& comm, const CallSignature& mine);

}  // namespace nshim
