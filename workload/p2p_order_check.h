// Whether one communicator's operations can all complete in the order the replay issues them, or
// deadlock. The replay's rules: each member runs its operations on a communicator in order, one batch
// at a time (consecutive operations of one NCCL group form a batch, posted together); a collective
// completes once every member has posted it; a send completes with its matching receive (the k-th
// send from a to b with the k-th receive on b from a) once both are posted: a send may wait for its
// receiver, as large NCCL sends do. The counts and sizes of sends and receives are checked before
// (workload_check.cc); this check adds their order.
#pragma once

#include <string>
#include <vector>

#include "workload/workload.h"

namespace nshim::workload {

// `ops[r]`: the operations of comm rank r on `comm`, in its issue order. Returns "" when every
// operation can complete, else a message naming the waiting ranks (global and communicator rank,
// "stage" on a pp communicator), the operation each waits in, its file:line, and whom it waits for.
std::string findDeadlock(const CommGroup& comm, const std::vector<std::vector<const WorkOp*>>& ops);

}  // namespace nshim::workload
