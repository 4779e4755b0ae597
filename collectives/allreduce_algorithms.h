// The allreduce algorithms behind allReduce() (allreduce.cc chooses): each runs on an input that
// is already pre-scaled, on more than one rank, with the operation's sequence number.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/communicator.h"
#include "common/status.h"
#include "model/datatype.h"

namespace nshim {

// `protocol`: the call's (kAuto: the options'); it decides how the buffer is cut into messages.
Status ringAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type, const ReduceOp& op,
                     uint64_t seq, int channels, Protocol protocol);
Status recursiveDoublingAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type,
                                  const ReduceOp& op, uint64_t seq);
Status treeAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type, const ReduceOp& op,
                     uint64_t seq, int channels);

}  // namespace nshim
