// Cutting an operation into pieces whose buffers fit a cap (op_pieces.h).
#include "phynet/op_pieces.h"

#include <algorithm>

namespace nshim::phynet {

BufferNeed collectiveBufferNeed(const WorkOp& op, int nranks) {
  // Send and recv use one side each (their descriptor sizes both, as nccl-tests' sendrecv).
  const uint64_t unit = op.count * dataTypeSize(op.type);
  const CollectiveDescriptor& d = describe(op.kind);
  return {unit * blockCount(d.sendBlocks, nranks), unit * blockCount(d.recvBlocks, nranks)};
}

PieceSplit splitToCap(const WorkOp& op, int nranks, uint64_t capBytes) {
  const BufferNeed need = collectiveBufferNeed(op, nranks);
  const uint64_t largest = std::max(need.sendBytes, need.recvBytes);
  if (largest <= capBytes || op.count == 0) return PieceSplit{1, op.count};
  // Bytes one element of the count needs on the larger side (n blocks for the gathering kinds).
  const uint64_t perElement = std::max<uint64_t>(largest / op.count, 1);
  const uint64_t perPiece = std::max<uint64_t>(capBytes / perElement, 1);
  return PieceSplit{(op.count + perPiece - 1) / perPiece, perPiece};
}

WorkOp pieceOf(const WorkOp& op, const PieceSplit& split, uint64_t index, int nranks) {
  if (split.pieces <= 1) return op;
  WorkOp piece = op;
  const uint64_t first = index * split.perPiece;
  piece.count = first >= op.count ? 0 : std::min(split.perPiece, op.count - first);
  piece.bytes = opBytes(op.kind, piece.count, op.type, nranks);
  return piece;
}

}  // namespace nshim::phynet
