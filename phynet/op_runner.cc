// Operation execution: buffer sizing of a batch, the arena (registered with the transport), and
// the mapping of workload ops (or their pieces, op_pieces.h) to the engine's collective calls
// (always out of place: the send region and the receive region of the arena).
#include "phynet/op_runner.h"

#include <algorithm>
#include <optional>

#include "collectives/collectives.h"
#include "collectives/pxn_relayed_point_to_point.h"
#include "common/log.h"
#include "model/call_choice.h"

namespace nshim::phynet {
namespace {

bool isPointToPoint(const WorkOp& op) { return op.kind == OpKind::kSend || op.kind == OpKind::kRecv; }

Status runCollective(Communicator& comm, CommArena& arena, const WorkOp& op) {
  const CallChoice choice = choiceOf(callRecordOf(op), comm.options(), comm.nranks(), comm.nodes().nodes());
  ReduceOp reduceOp;
  reduceOp.kind = op.reduce;
  void* send = arena.send();
  void* recv = arena.recv();
  const size_t count = op.count;
  switch (op.kind) {
    case OpKind::kAllReduce: return allReduce(comm, send, recv, count, op.type, reduceOp, choice);
    case OpKind::kAllGather: return allGather(comm, send, recv, count, op.type, choice);
    case OpKind::kReduceScatter: return reduceScatter(comm, send, recv, count, op.type, reduceOp, choice);
    case OpKind::kBroadcast: return broadcast(comm, send, recv, count, op.type, op.root, choice);
    case OpKind::kReduce: return reduce(comm, send, recv, count, op.type, reduceOp, op.root, choice);
    case OpKind::kAllToAll: return allToAll(comm, send, recv, count, op.type, op.channels);
    case OpKind::kGather: return gather(comm, send, recv, count, op.type, op.root);
    case OpKind::kScatter: return scatter(comm, send, recv, count, op.type, op.root);
    default: return NS_ERROR(Code::kInternal, "{} is not a collective", opKindName(op.kind));
  }
}

}  // namespace

BufferNeed batchBufferNeed(std::span<const WorkOp* const> ops, int nranks, bool distinctSends, uint64_t capBytes) {
  BufferNeed need;
  uint64_t p2pRecv = 0, p2pSend = 0;
  for (const WorkOp* op : ops) {
    if (op->kind == OpKind::kSend) {
      p2pSend = distinctSends ? p2pSend + op->bytes : std::max<uint64_t>(p2pSend, op->bytes);
    } else if (op->kind == OpKind::kRecv) {
      p2pRecv += op->bytes;
    } else {
      BufferNeed c = collectiveBufferNeed(*op, nranks);
      need.sendBytes = std::max(need.sendBytes, c.sendBytes);
      need.recvBytes = std::max(need.recvBytes, c.recvBytes);
    }
  }
  need.sendBytes = std::min(std::max(need.sendBytes, p2pSend), capBytes);
  need.recvBytes = std::min(std::max(need.recvBytes, p2pRecv), capBytes);
  return need;
}

namespace {}  // namespace

// Grows the side to `bytes` (zero-filled) and registers it anew; without a registration the
// transport copies through its own buffers, so a refusal only costs speed. With `staging` > 0 and
// more bytes than that, the side is aliased staging memory instead; if that cannot be mapped, plain.
void CommArena::Side::grow(size_t bytes, size_t staging, Transport* transport) {
  const size_t have = aliased_.data() != nullptr ? aliased_.size() : plain_.size();
  if (have >= bytes) return;
  registration_.reset();
  char* memory = nullptr;
  size_t size = bytes;
  if (staging > 0 && bytes > staging) {
    Result<AliasedMemory> aliased = AliasedMemory::create(bytes, staging);
    if (aliased.ok()) {
      aliased_ = std::move(aliased).value();
      std::vector<char>().swap(plain_);
      memory = aliased_.data();
      size = aliased_.size();
    } else {
      NS_WARN("phynet: {}; this buffer is whole memory", aliased.status().message());
    }
  }
  if (memory == nullptr) {
    aliased_ = AliasedMemory();
    plain_.assign(bytes, 0);  // the zero fill maps every page now, before timing
    memory = plain_.data();
  }
  if (transport == nullptr) return;
  auto registered = MemoryRegistration::create(*transport, memory, size);
  if (registered.ok()) {
    registration_ = std::move(registered).value();
  } else {
    NS_INFO("phynet: buffer of {} bytes not registered with the transport: {}", bytes, registered.status().message());
  }
}

void CommArena::reserve(const BufferNeed& need, Transport* transport) {
  // At least one byte each so that data() is never null (the engine rejects null buffers).
  send_.grow(std::max<size_t>(need.sendBytes, 1), stagingBytes_, transport);
  recv_.grow(std::max<size_t>(need.recvBytes, 1), stagingBytes_, transport);
}

Status runBatch(Communicator& comm, CommArena& arena, std::span<const WorkOp* const> ops, std::span<OpTiming> timing,
                size_t* failedOp, DataCheck* check, uint64_t capBytes) {
  if (check != nullptr) capBytes = kNoCap;  // --verify runs every op whole (its memory was checked)
  const BufferNeed need = batchBufferNeed(ops, comm.nranks(), check != nullptr, capBytes);
  arena.reserve(need, &comm.transport());
  const int nranks = comm.nranks();
  std::vector<P2POp> p2p;
  std::vector<size_t> p2pIndex;
  std::vector<uint64_t> receiveIndex;  // --verify: the pair's message index of each receive
  size_t recvOffset = 0, sendOffset = 0;
  auto bytesAt = [](char* base, size_t offset) { return reinterpret_cast<uint8_t*>(base + offset); };
  for (size_t i = 0; i < ops.size(); ++i) {
    const WorkOp& op = *ops[i];
    if (!isPointToPoint(op)) continue;
    const PieceSplit split = splitToCap(op, nranks, capBytes);
    for (uint64_t k = 0; k < split.pieces; ++k) {
      const size_t bytes = pieceOf(op, split, k, nranks).bytes;
      if (op.kind == OpKind::kSend) {
        p2p.push_back({P2POp::Kind::kSend, op.peer, arena.send() + sendOffset, bytes, op.channels});
        if (check) {
          check->fillSend(op.peer, bytesAt(arena.send(), sendOffset), bytes);
          sendOffset += bytes;
        }
        receiveIndex.push_back(0);
      } else {
        if (recvOffset + bytes > need.recvBytes) recvOffset = 0;  // beyond the cap: reuse the region
        p2p.push_back({P2POp::Kind::kRecv, op.peer, arena.recv() + recvOffset, bytes, op.channels});
        recvOffset += bytes;
        receiveIndex.push_back(check ? check->nextReceive(op.peer) : 0);
      }
      p2pIndex.push_back(i);
    }
  }
  auto runP2p = [&]() -> Status {
    if (p2p.empty()) return Status::Ok();
    int64_t start = nowNs();
    Status status = runRelayedPointToPoint(comm, p2p);  // --pxn: the relayed ones through the relay
    int64_t end = nowNs();
    for (size_t i : p2pIndex) timing[i] = {start, end};
    if (!status.ok()) {
      *failedOp = p2pIndex.front();
      return status;
    }
    for (size_t k = 0; k < p2p.size() && check; ++k) {
      if (p2p[k].kind != P2POp::Kind::kRecv) continue;
      status =
          check->checkReceive(p2p[k].peer, receiveIndex[k], static_cast<const uint8_t*>(p2p[k].buffer), p2p[k].bytes);
      if (!status.ok()) {
        *failedOp = p2pIndex[k];
        return status;
      }
    }
    return Status::Ok();
  };
  // NCCL issues a group's work together; here the point-to-point part goes first when the group
  // starts with it (the same rule on every rank, so the ranks agree on the order).
  const bool p2pFirst = !ops.empty() && isPointToPoint(*ops.front());
  if (p2pFirst) NS_RETURN_IF_ERROR(runP2p());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (isPointToPoint(*ops[i])) continue;
    const WorkOp* op = ops[i];
    WorkOp checked;  // --verify: the op as it runs then
    if (check) {
      checked = checkedForm(*op);
      op = &checked;
      check->fillCollective(*op, bytesAt(arena.send(), 0));
    }
    const PieceSplit split = splitToCap(*op, nranks, capBytes);
    timing[i].startNs = nowNs();
    Status status = Status::Ok();
    for (uint64_t k = 0; k < split.pieces && status.ok(); ++k) {
      status = runCollective(comm, arena, split.pieces == 1 ? *op : pieceOf(*op, split, k, nranks));
    }
    timing[i].endNs = nowNs();
    if (status.ok() && check) status = check->checkCollective(*op, bytesAt(arena.recv(), 0));
    if (!status.ok()) {
      *failedOp = i;
      return status;
    }
  }
  if (!p2pFirst) NS_RETURN_IF_ERROR(runP2p());
  return Status::Ok();
}

}  // namespace nshim::phynet
