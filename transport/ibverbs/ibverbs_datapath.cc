// The ibverbs transport's data path. A progress pass polls the CQ in batches (data arrivals, credits,
// offers, signaled send completions; every status checked and reported with ibv_wc_status_str
// naming the peer), then services each active connection in an order that keeps the receive queues
// ahead of what may arrive: repost consumed receive WQEs, finish zero-copy sends whose writes are
// done, copy arrived fragments into posted receives (or complete those written zero-copy), offer
// the next large receives to the peer, start pending sends (a zero-copy write where the peer's
// offer allows, else fragments copied into free slots, as far as credits and the send queue
// allow), return freed slots as a credit on the inbound QP, and post everything built for each QP
// as one list. The zero-copy parts are in ibverbs_zero_copy.cc.
#include <endian.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "transport/ibverbs/ibverbs_transport_impl.h"

namespace nshim::ib {
namespace {

constexpr int kPollBatch = 32;
constexpr int kPollRounds = 8;  // at most 256 completions per pass, then service what they enabled

}  // namespace

bool IbverbsTransport::datapathPassLocked() {
  if (aborted_) return false;
  if (poster_) collectPostFailuresLocked();
  bool moved = pollCqLocked();
  for (size_t i = 0; i < active_.size() && !aborted_; ++i) serviceLocked(*active_[i]);
  size_t kept = 0;
  for (Connection* c : active_) {
    bool busy = !c->sends.empty() || !c->recvs.empty() || !c->directSends.empty() ||
                c->slotsConsumed != c->creditsReported || !c->outbound.toRepost.empty() ||
                !c->inbound.toRepost.empty() || c->outbound.listed > 0 || c->inbound.listed > 0;
    if (busy && !aborted_) {
      active_[kept++] = c;
    } else {
      c->active = false;
    }
  }
  active_.resize(kept);
  return moved;
}

bool IbverbsTransport::pollCqLocked() {
  int total = 0;
  for (int round = 0; round < kPollRounds && !aborted_; ++round) {
    int n = ibv_poll_cq(res_->cq.get(), kPollBatch, wcs_.data());
    if (n < 0) {
      abortLocked(NS_ERROR(Code::kSystemError, "rank {}: ibv_poll_cq failed on {} ({})", rank_,
                           res_->device.name, n));
      return false;
    }
    for (int i = 0; i < n; ++i) handleCompletion(wcs_[i]);
    total += n;
    if (n < kPollBatch) break;
  }
  std::atomic_thread_fence(std::memory_order_acquire);  // ring contents after their completions
  return total > 0;
}

void IbverbsTransport::handleCompletion(const ibv_wc& wc) {
  size_t id = static_cast<size_t>(wc.wr_id >> kWrIdShift);
  if (id >= res_->connections.size()) {
    abortLocked(NS_ERROR(Code::kInternal, "rank {}: completion with unknown wr_id {:#x}", rank_, wc.wr_id));
    return;
  }
  Connection& c = res_->connections[id];
  bool isRecv = (wc.wr_id & kWrIdRecv) != 0;
  bool isInbound = (wc.wr_id & kWrIdInbound) != 0;
  QpLane& lane = c.lane(isInbound);
  if (wc.status != IBV_WC_SUCCESS) {
    if (aborted_ || peers_[c.peer].lost) return;  // the flush of a connection that already failed
    failPeerLocked(c.peer, fmt::format("{} on the {} QP of link {} of {} (QP number {:#x}) completed with error: {} "
                                       "(status {}, vendor error {:#x})", isRecv ? "a receive" : "an RDMA write/send",
                                       isInbound ? "inbound" : "outbound", c.index, qpsPerPeer_, lane.qpn,
                                       api_.wcStatusStr(wc.status), static_cast<int>(wc.status), wc.vendor_err));
    return;
  }
  if (!isRecv) {  // a signaled write or credit send: it and every request before it are done
    uint64_t seq = wc.wr_id & kWrIdSeqMask;
    lane.wrRetired = std::max(lane.wrRetired, seq + 1);
    if (!isInbound && !c.directSends.empty()) activate(c);  // zero-copy sends may be done
    return;
  }
  const uint32_t wqe = static_cast<uint32_t>(wc.wr_id & kWrIdSeqMask);
  if (wqe >= lane.recvWrs.size()) {
    abortLocked(NS_ERROR(Code::kInternal, "rank {}: receive completion with unknown wr_id {:#x}", rank_, wc.wr_id));
    return;
  }
  lane.toRepost.push_back(wqe);
  uint32_t imm = be32toh(wc.imm_data);
  if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
    failPeerLocked(c.peer, "a message without immediate data arrived (not an ncclshim peer?)");
    return;
  }
  if (((imm & kCreditFlag) != 0) == isInbound) {
    failPeerLocked(c.peer, fmt::format("a {} arrived on the {} QP of link {}, which carries only {}",
                                       isInbound ? "credit" : "data fragment", isInbound ? "inbound" : "outbound",
                                       c.index, isInbound ? "data" : "credits"));
    return;
  }
  if ((imm & kCreditFlag) && (imm & kOfferFlag)) {
    if (!takeOffer(c, lane.landing + size_t{wqe} * kControlSlotBytes, wc.byte_len, imm & kSeqMask)) return;
  } else if (imm & kCreditFlag) {
    c.creditsSeen += ((imm & kSeqMask) - (c.creditsSeen & kSeqMask)) & kSeqMask;
  } else {
    if ((imm & kSeqMask) != (c.fragsArrived & kSeqMask)) {
      failPeerLocked(c.peer, fmt::format("fragment {} arrived on QP {} where fragment {} was due", imm & kSeqMask,
                                         c.index, c.fragsArrived & kSeqMask));
      return;
    }
    c.arrivals.push((imm & kDirectFlag) != 0 ? 1 : 0);
    ++c.fragsArrived;
  }
  activate(c);
}

void IbverbsTransport::collectPostFailuresLocked() {
  for (const WritePoster::Failure& f : poster_->takeFailures()) {
    const Connection& c = res_->connections[f.connection];
    failPeerLocked(c.peer, fmt::format("ibv_post_send of {} work requests on the outbound QP of link {} failed: {}",
                                       f.count, c.index, std::strerror(f.error)));
  }
}

void IbverbsTransport::activate(Connection& c) {
  if (!c.active) {
    c.active = true;
    active_.push_back(&c);
  }
}

void IbverbsTransport::serviceLocked(Connection& c) {
  if (peers_[c.peer].lost) return;
  repostRecvs(c, c.outbound);
  repostRecvs(c, c.inbound);
  if (!c.directSends.empty()) completeDirectSends(c);
  if (!c.recvs.empty() && !c.arrivals.empty()) driveRecvs(c);
  if (c.recvsOffered < c.recvsDone + c.recvs.size()) addOffers(c);
  if (!c.sends.empty()) driveSends(c);
  if (c.slotsConsumed != c.creditsReported && !sendQueueFull(c.inbound)) addCredit(c);
  flush(c, c.outbound);
  flush(c, c.inbound);
}

// Posts the consumed receive WQEs again, chained in the order they completed (each keeps its own
// landing entry).
void IbverbsTransport::repostRecvs(Connection& c, QpLane& lane) {
  if (lane.toRepost.empty() || aborted_) return;
  for (size_t i = 0; i < lane.toRepost.size(); ++i) {
    lane.recvWrs[lane.toRepost[i]].next = i + 1 < lane.toRepost.size() ? &lane.recvWrs[lane.toRepost[i + 1]] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(lane.qp.get(), &lane.recvWrs[lane.toRepost.front()], &bad);
  lane.toRepost.clear();
  if (rc != 0) return failPeerLocked(c.peer, fmt::format("ibv_post_recv failed: {}", std::strerror(rc)));
}

bool IbverbsTransport::fragmentMatches(Connection& c, PendingOp& op, const FragmentHeader& h) {
  Request* req = op.req;
  Status error;
  if (h.magic != kFragmentMagic || h.bytes > shape_.payloadBytes()) {
    error = NS_ERROR(Code::kRemoteError, "rank {} received a corrupt fragment header from rank {} on QP {} (magic "
                     "{:#010x}, {} bytes)", rank_, c.peer, c.index, h.magic, h.bytes);
  } else if (!op.started && (h.tag != req->tag || h.total != req->bytes)) {
    error = NS_ERROR(Code::kRemoteError,
                     "rank {} received a message from rank {} with tag {:#x} and {} bytes, but the matching receive "
                     "posted by rank {} expects tag {:#x} and {} bytes: the ranks disagree about the operation "
                     "sequence", rank_, c.peer, h.tag, h.total, rank_, req->tag, req->bytes);
  } else if (h.tag != req->tag || h.total != req->bytes || h.offset != op.offset || h.bytes > h.total - op.offset) {
    error = NS_ERROR(Code::kRemoteError, "rank {} received an out-of-order fragment from rank {} on QP {} (offset {} "
                     "of {}, expected offset {})", rank_, c.peer, c.index, h.offset, h.total, op.offset);
  } else {
    return true;
  }
  NS_WARN("{}", error.message());
  c.recvs.pop();
  fail(req, error);
  abortLocked(error);
  return false;
}

void IbverbsTransport::driveRecvs(Connection& c) {
  while (!c.recvs.empty() && !c.arrivals.empty()) {
    if (c.arrivals.front() != 0) {
      if (!finishDirectRecv(c)) return;
      continue;
    }
    const char* slot = c.rxRing + (c.slotsConsumed % shape_.slots) * shape_.slotStride;
    FragmentHeader h = FragmentHeader::load(slot);
    PendingOp& op = c.recvs.front();
    if (!fragmentMatches(c, op, h)) return;
    if (h.bytes > 0) std::memcpy(op.buf + op.offset, slot + kFragmentHeaderBytes, h.bytes);
    op.offset += h.bytes;
    op.started = true;
    c.arrivals.pop();
    ++c.slotsConsumed;
    addRelaxed(peers_[c.peer].received, h.bytes);
    if (op.offset == h.total) {
      Request* req = op.req;
      c.recvs.pop();
      ++c.recvsDone;
      req->complete(Status());
    }
  }
}

bool IbverbsTransport::sendQueueFull(const QpLane& lane) const {
  return lane.wrPosted + lane.listed - lane.wrRetired >= shape_.sendDepth || lane.listed >= lane.wrs.size();
}

void IbverbsTransport::driveSends(Connection& c) {
  const size_t payload = shape_.payloadBytes();
  while (!c.sends.empty() && !sendQueueFull(c.outbound)) {
    PendingOp& op = c.sends.front();
    if (!op.started && op.region != nullptr) {
      ZeroCopyChoice choice = tryDirectSend(c, op);
      if (choice == ZeroCopyChoice::kWaitForOffer) return;
      if (choice == ZeroCopyChoice::kWritten) continue;
    }
    if (c.slotsPosted - c.creditsSeen >= shape_.slots) return;
    const size_t total = op.req->bytes;
    const size_t bytes = std::min(payload, total - op.offset);
    const uint64_t slotIndex = c.slotsPosted % shape_.slots;
    char* slot = c.txRing + slotIndex * shape_.slotStride;
    FragmentHeader header;
    header.bytes = static_cast<uint32_t>(bytes);
    header.tag = op.req->tag;
    header.total = total;
    header.offset = op.offset;
    header.store(slot);
    if (bytes > 0) std::memcpy(slot + kFragmentHeaderBytes, op.buf + op.offset, bytes);
    addWrite(c, slot, static_cast<uint32_t>(kFragmentHeaderBytes + bytes), res_->mr->lkey,
             c.remoteRing + slotIndex * shape_.slotStride, c.remoteKey, static_cast<uint32_t>(c.fragsPosted & kSeqMask));
    ++c.fragsPosted;
    ++c.slotsPosted;
    op.offset += bytes;
    op.started = true;
    addRelaxed(peers_[c.peer].sent, bytes);
    if (op.offset == total) {  // the data is in registered memory: the caller's buffer is free
      Request* req = op.req;
      c.sends.pop();
      ++c.sendsTaken;
      req->complete(Status());
    }
  }
}

ibv_send_wr& IbverbsTransport::addWrite(Connection& c, const char* local, uint32_t bytes, uint32_t lkey, uint64_t remote,
                                        uint32_t rkey, uint32_t imm) {
  QpLane& lane = c.outbound;
  size_t i = lane.listed++;
  lane.sges[i] = ibv_sge{reinterpret_cast<uintptr_t>(local), bytes, lkey};
  ibv_send_wr& wr = lane.wrs[i];
  wr = ibv_send_wr{};
  wr.wr_id = makeWrId(c.id, false, lane.wrPosted + i, false);
  wr.sg_list = &lane.sges[i];
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htobe32(imm);
  wr.wr.rdma.remote_addr = remote;
  wr.wr.rdma.rkey = rkey;
  if (bytes <= lane.maxInline) wr.send_flags = IBV_SEND_INLINE;
  return wr;
}

void IbverbsTransport::addCredit(Connection& c) {
  QpLane& lane = c.inbound;
  size_t i = lane.listed++;
  ibv_send_wr& wr = lane.wrs[i];
  wr = ibv_send_wr{};
  wr.wr_id = makeWrId(c.id, true, lane.wrPosted + i, false);
  wr.num_sge = 0;  // a zero-byte send: only the immediate matters
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htobe32(kCreditFlag | static_cast<uint32_t>(c.slotsConsumed & kSeqMask));
  c.creditsReported = c.slotsConsumed;
}

void IbverbsTransport::flush(Connection& c, QpLane& lane) {
  if (lane.listed == 0) return;
  size_t lastData = lane.listed;  // the last data write of the list, if any
  for (size_t i = 0; i < lane.listed; ++i) {
    if (lane.wrs[i].opcode == IBV_WR_RDMA_WRITE_WITH_IMM) lastData = i;
  }
  uint64_t wireBytes = 0;  // what these work requests carry as RoCE payload
  for (size_t i = 0; i < lane.listed; ++i) {
    ibv_send_wr& wr = lane.wrs[i];
    if (wr.num_sge > 0) wireBytes += wr.sg_list[0].length;
    uint64_t seq = lane.wrPosted + i;
    // One in signalEvery, and the last write of a burst so that teardown can wait for the data.
    // Zero-copy writes come signaled: their completion frees the caller's buffer.
    bool endOfBurst = i == lastData && c.sends.empty();
    if ((wr.send_flags & IBV_SEND_SIGNALED) || (seq + 1) % shape_.signalEvery == 0 || endOfBurst) {
      wr.send_flags |= IBV_SEND_SIGNALED;
      if (i <= lastData && lastData < lane.listed) lane.drainTarget = seq + 1;  // retires data (credits don't count)
    }
    wr.next = i + 1 == lane.listed ? nullptr : &lane.wrs[i + 1];
  }
  size_t count = lane.listed;
  lane.listed = 0;
  addRelaxed(peers_[c.peer].sentWire, wireBytes);
  if (poster_ && &lane == &c.outbound) {
    poster_->enqueue(lane.qp.get(), c.id, {lane.wrs.data(), count}, {lane.sges.data(), count});
    lane.wrPosted += count;
    return;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(lane.qp.get(), lane.wrs.data(), &bad);
  if (rc != 0) {
    return failPeerLocked(c.peer, fmt::format("ibv_post_send of {} work requests on the {} QP of link {} failed: {}",
                                              count, &lane == &c.inbound ? "inbound" : "outbound", c.index,
                                              std::strerror(rc)));
  }
  lane.wrPosted += count;
}

}  // namespace nshim::ib
