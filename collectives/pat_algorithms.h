// The PAT allgather and reduce-scatter (pat_allgather.cc, pat_reduce_scatter.cc), run by
// allGather / reduceScatter when NCCL's PAT is chosen (collectives.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/communicator.h"
#include "common/status.h"
#include "model/datatype.h"

namespace nshim {

// `output` holds nranks blocks of `perRank` elements, this rank's own already in place.
Status patAllGather(Communicator& comm, char* output, size_t perRank, DataType type, uint64_t seq, int channels);
// `input` holds nranks blocks of `perRank` elements (pre-scaled); `output` gets this rank's sum.
Status patReduceScatter(Communicator& comm, const char* input, char* output, size_t perRank, DataType type,
                        const ReduceOp& op, uint64_t seq, int channels);

}  // namespace nshim
