// The engine's collective operations on host memory, NCCL semantics: counts are in elements;
// send and receive buffers may be the same (in-place) where NCCL allows it. Each returns when the
// operation has completed on this rank. Arguments are validated first (kInvalidArgument).
#pragma once

#include <cstddef>
#include <span>

#include "collectives/communicator.h"
#include "common/status.h"
#include "model/allreduce_plan.h"
#include "model/datatype.h"

namespace nshim {

Status allReduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                 CallChoice choice = {});
// recv holds nranks * sendCount elements, rank r's contribution at r * sendCount. The ring, or
// NCCL's PAT where `choice` (else the options) says kPat and every node has one rank.
Status allGather(Communicator& comm, const void* send, void* recv, size_t sendCount, DataType type,
                 CallChoice choice = {});
// send holds nranks * recvCount elements; rank r receives the reduced block r. Ring or PAT as
// allGather.
Status reduceScatter(Communicator& comm, const void* send, void* recv, size_t recvCount, DataType type,
                     const ReduceOp& op, CallChoice choice = {});
Status broadcast(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root,
                 CallChoice choice = {});
// recv is only written on the root (may be null elsewhere).
Status reduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
              int root, CallChoice choice = {});
// count elements to and from each peer: send and recv hold nranks * count elements. `channels`: each
// transfer's, as NCCL moved them (0: as NCCL would choose, p2p_channels.h).
Status allToAll(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int channels = 0);
// root receives nranks * count elements (recv only on root).
Status gather(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root);
// root sends nranks * count elements (send only on root).
Status scatter(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root);

// The most scratch (Communicator::scratch) any reduction on a communicator with these options asks
// for: the ring stages (window x 2 slices), the tree's chunks from up to kMaxTreeDown children, the
// recursive-doubling copy.
// Reserving it before timing keeps its allocation and registration out of the first reduction.
size_t reductionScratchBound(const CollectiveOptions& options);
// What any reduction of a buffer of `bufferBytes` (its count argument in bytes: a reduce-scatter's
// per-rank block) asks for, at most: a slice or chunk is never larger than the buffer, so the
// stages follow its bytes (window x max(2, kMaxTreeDown) of them) up to reductionScratchBound.
size_t reductionScratchFor(const CollectiveOptions& options, size_t bufferBytes);

// Point-to-point, issued together: all operations in the batch are posted before any is waited for,
// so any set of matching sends and receives completes without deadlock. Between a pair of ranks,
// sends and receives are matched in issue order.
struct P2POp {
  enum class Kind { kSend, kRecv };
  Kind kind;
  int peer;
  void* buffer;  // const for sends
  size_t bytes;
  // The channels NCCL moved it on (a trace's record; both ends must say the same), each part on its
  // own connection; 0: as NCCL would choose (p2p_channels.h).
  int channels = 0;
};
Status runPointToPoint(Communicator& comm, std::span<const P2POp> ops);

}  // namespace nshim
