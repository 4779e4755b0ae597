// Operation execution: buffer sizing per op kind, the arena (registered with the transport), and
// the mapping of workload ops to the engine's collective calls (always out of place: the send
// region and the receive region of the arena).
#include "phynet/op_runner.h"

#include <algorithm>

#include "collectives/collectives.h"
#include "common/log.h"

namespace nshim::phynet {
namespace {

bool isPointToPoint(const WorkOp& op) { return op.kind == OpKind::kSend || op.kind == OpKind::kRecv; }

// Send and receive bytes of one collective on an n-rank communicator.
BufferNeed collectiveNeed(const WorkOp& op, int nranks) {
  const size_t unit = op.count * dataTypeSize(op.type);
  const size_t all = unit * static_cast<size_t>(nranks);
  switch (op.kind) {
    case OpKind::kAllGather:
    case OpKind::kGather: return {unit, all};
    case OpKind::kReduceScatter:
    case OpKind::kScatter: return {all, unit};
    case OpKind::kAllToAll: return {all, all};
    default: return {unit, unit};
  }
}

Status runCollective(Communicator& comm, CommArena& arena, const WorkOp& op) {
  ReduceOp reduceOp;
  reduceOp.kind = op.reduce;
  void* send = arena.send();
  void* recv = arena.recv();
  const size_t count = op.count;
  switch (op.kind) {
    case OpKind::kAllReduce: return allReduce(comm, send, recv, count, op.type, reduceOp);
    case OpKind::kAllGather: return allGather(comm, send, recv, count, op.type);
    case OpKind::kReduceScatter: return reduceScatter(comm, send, recv, count, op.type, reduceOp);
    case OpKind::kBroadcast: return broadcast(comm, send, recv, count, op.type, op.root);
    case OpKind::kReduce: return reduce(comm, send, recv, count, op.type, reduceOp, op.root);
    case OpKind::kAllToAll: return allToAll(comm, send, recv, count, op.type);
    case OpKind::kGather: return gather(comm, send, recv, count, op.type, op.root);
    case OpKind::kScatter: return scatter(comm, send, recv, count, op.type, op.root);
    default: return NS_ERROR(Code::kInternal, "{} is not a collective", opKindName(op.kind));
  }
}

}  // namespace

BufferNeed batchBufferNeed(std::span<const WorkOp* const> ops, int nranks, bool distinctSends) {
  BufferNeed need;
  size_t p2pRecv = 0, p2pSend = 0;
  for (const WorkOp* op : ops) {
    if (op->kind == OpKind::kSend) {
      p2pSend = distinctSends ? p2pSend + op->bytes : std::max<size_t>(p2pSend, op->bytes);
    } else if (op->kind == OpKind::kRecv) {
      p2pRecv += op->bytes;
    } else {
      BufferNeed c = collectiveNeed(*op, nranks);
      need.sendBytes = std::max(need.sendBytes, c.sendBytes);
      need.recvBytes = std::max(need.recvBytes, c.recvBytes);
    }
  }
  need.sendBytes = std::max(need.sendBytes, p2pSend);
  need.recvBytes = std::max(need.recvBytes, p2pRecv);
  return need;
}

namespace {

// Grows `memory` to `bytes` (zero-filled) and registers it anew; without a registration the
// transport copies through its own buffers, so a refusal only costs speed.
void growRegistered(std::vector<char>& memory, size_t bytes, Transport* transport, MemoryRegistration& registration) {
  if (memory.size() >= bytes) return;
  registration.reset();
  memory.assign(bytes, 0);
  if (transport == nullptr) return;
  auto registered = MemoryRegistration::create(*transport, memory.data(), memory.size());
  if (registered.ok()) {
    registration = std::move(registered).value();
  } else {
    NS_INFO("phynet: buffer of {} bytes not registered with the transport: {}", bytes, registered.status().message());
  }
}

}  // namespace

void CommArena::reserve(const BufferNeed& need, Transport* transport) {
  // At least one byte each so that data() is never null (the engine rejects null buffers).
  growRegistered(send_, std::max<size_t>(need.sendBytes, 1), transport, sendRegistration_);
  growRegistered(recv_, std::max<size_t>(need.recvBytes, 1), transport, recvRegistration_);
}

Status runBatch(Communicator& comm, CommArena& arena, std::span<const WorkOp* const> ops, std::span<OpTiming> timing,
                size_t* failedOp, DataCheck* check) {
  arena.reserve(batchBufferNeed(ops, comm.nranks(), check != nullptr), &comm.transport());
  std::vector<P2POp> p2p;
  std::vector<size_t> p2pIndex;
  std::vector<uint64_t> receiveIndex;  // --verify: the pair's message index of each receive
  size_t recvOffset = 0, sendOffset = 0;
  auto bytesAt = [](char* base, size_t offset) { return reinterpret_cast<uint8_t*>(base + offset); };
  for (size_t i = 0; i < ops.size(); ++i) {
    const WorkOp& op = *ops[i];
    if (!isPointToPoint(op)) continue;
    if (op.kind == OpKind::kSend) {
      p2p.push_back({P2POp::Kind::kSend, op.peer, arena.send() + sendOffset, op.bytes});
      if (check) {
        check->fillSend(op.peer, bytesAt(arena.send(), sendOffset), op.bytes);
        sendOffset += op.bytes;
      }
      receiveIndex.push_back(0);
    } else {
      p2p.push_back({P2POp::Kind::kRecv, op.peer, arena.recv() + recvOffset, op.bytes});
      recvOffset += op.bytes;
      receiveIndex.push_back(check ? check->nextReceive(op.peer) : 0);
    }
    p2pIndex.push_back(i);
  }
  auto runP2p = [&]() -> Status {
    if (p2p.empty()) return Status::Ok();
    int64_t start = nowNs();
    Status status = runPointToPoint(comm, p2p);
    int64_t end = nowNs();
    for (size_t i : p2pIndex) timing[i] = {start, end};
    if (!status.ok()) {
      *failedOp = p2pIndex.front();
      return status;
    }
    for (size_t k = 0; k < p2p.size() && check; ++k) {
      if (p2p[k].kind != P2POp::Kind::kRecv) continue;
      status = check->checkReceive(p2p[k].peer, receiveIndex[k], static_cast<const uint8_t*>(p2p[k].buffer),
                                   p2p[k].bytes);
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
    timing[i].startNs = nowNs();
    Status status = runCollective(comm, arena, *op);
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
