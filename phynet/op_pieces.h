// Bounded buffers (phynet --max-buffer): without --verify the content of the bytes does not matter,
// so an operation whose buffers exceed the cap runs as consecutive pieces of the same kind on the
// same arena, each piece's buffers within the cap. The same bytes cross the wire (in pieces, as
// NCCL itself moves a large operation in chunks); the op is timed from the first piece's start to
// the last piece's end. The traffic model splits the same way, so model and wire stay equal.
#pragma once

#include <cstdint>

#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

// Buffer bytes one collective needs on an n-rank communicator (send side, receive side).
struct BufferNeed {
  uint64_t sendBytes = 0;
  uint64_t recvBytes = 0;
};
BufferNeed collectiveBufferNeed(const WorkOp& op, int nranks);

// How an op is cut: `pieces` consecutive pieces of `perPiece` elements (count units; the last
// piece takes the remainder). One piece (the op itself) when its buffers fit the cap.
struct PieceSplit {
  uint64_t pieces = 1;
  uint64_t perPiece = 0;
};
PieceSplit splitToCap(const WorkOp& op, int nranks, uint64_t capBytes);

// Piece `index` of `op` under `split`: same kind, type, root and peer; its own count and bytes.
WorkOp pieceOf(const WorkOp& op, const PieceSplit& split, uint64_t index, int nranks);

}  // namespace nshim::phynet
