// One ibverbs link's data path (Connection, ibverbs_connection.h). The transport's progress pass
// (ibverbs_progress.cc) hands each completion to its link, then services each active link in an
// order that keeps the receive queues ahead of what may arrive: repost consumed receive WQEs,
// finish zero-copy sends whose writes are done, copy arrived fragments into posted receives (or
// complete those written zero-copy), offer the next large receives to the peer, start pending
// sends (a zero-copy write where the peer's offer allows, else fragments copied into free slots, as
// far as credits and the send queue allow), return freed slots as a credit on the inbound QP, and
// post everything built for each QP as one list. Every completion status is checked and reported
// with ibv_wc_status_str naming the peer. The zero-copy parts are in ibverbs_zero_copy.cc.
#include <endian.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "transport/ibverbs/ibverbs_transport_impl.h"

namespace nshim::ib {

void Connection::onCompletion(const ibv_wc& wc, int qpsPerPeer) {
  bool isRecv = (wc.wr_id & kWrIdRecv) != 0;
  bool isInbound = (wc.wr_id & kWrIdInbound) != 0;
  QpLane& lane = this->lane(isInbound);
  if (wc.status != IBV_WC_SUCCESS) {
    if (owner_->aborted() || peerLink_->lost) return;  // the flush of a connection that already failed
    owner_->linkFailed(peer, fmt::format("{} on the {} QP of link {} of {} (QP number {:#x}) completed with error: {} "
                                         "(status {}, vendor error {:#x})",
                                         isRecv ? "a receive" : "an RDMA write/send",
                                         isInbound ? "inbound" : "outbound", index, qpsPerPeer, lane.qpn,
                                         api_->wcStatusStr(wc.status), static_cast<int>(wc.status), wc.vendor_err));
    return;
  }
  if (!isRecv) {  // a signaled write or credit send: it and every request before it are done
    uint64_t seq = wc.wr_id & kWrIdSeqMask;
    lane.wrRetired = std::max(lane.wrRetired, seq + 1);
    if (!isInbound && !directSends.empty()) owner_->activate(*this);  // zero-copy sends may be done
    return;
  }
  const uint32_t wqe = static_cast<uint32_t>(wc.wr_id & kWrIdSeqMask);
  if (wqe >= lane.recvWrs.size()) {
    owner_->transportFailed(
        NS_ERROR(Code::kInternal, "rank {}: receive completion with unknown wr_id {:#x}", rank_, wc.wr_id));
    return;
  }
  lane.toRepost.push_back(wqe);
  uint32_t imm = be32toh(wc.imm_data);
  if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
    owner_->linkFailed(peer, "a message without immediate data arrived (not an ncclshim peer?)");
    return;
  }
  if (((imm & kCreditFlag) != 0) == isInbound) {
    owner_->linkFailed(peer, fmt::format("a {} arrived on the {} QP of link {}, which carries only {}",
                                         isInbound ? "credit" : "data fragment", isInbound ? "inbound" : "outbound",
                                         index, isInbound ? "data" : "credits"));
    return;
  }
  if ((imm & kCreditFlag) && (imm & kOfferFlag)) {
    if (!takeOffer(lane.landing + size_t{wqe} * kControlSlotBytes, wc.byte_len, imm & kSeqMask)) return;
  } else if (imm & kCreditFlag) {
    creditsSeen += ((imm & kSeqMask) - (creditsSeen & kSeqMask)) & kSeqMask;
  } else {
    if ((imm & kSeqMask) != (fragsArrived & kSeqMask)) {
      owner_->linkFailed(peer, fmt::format("fragment {} arrived on QP {} where fragment {} was due", imm & kSeqMask,
                                           index, fragsArrived & kSeqMask));
      return;
    }
    arrivals.push((imm & kDirectFlag) != 0 ? 1 : 0);
    ++fragsArrived;
  }
  owner_->activate(*this);
}

void Connection::service() {
  if (peerLink_->lost) return;
  repostRecvs(outbound);
  repostRecvs(inbound);
  if (!directSends.empty()) completeDirectSends();
  if (!recvs.empty() && !arrivals.empty()) driveRecvs();
  if (recvsOffered < recvsDone + recvs.size()) addOffers();
  if (!sends.empty()) driveSends();
  if (slotsConsumed != creditsReported && !sendQueueFull(inbound)) addCredit();
  flush(outbound);
  flush(inbound);
}

// Posts the consumed receive WQEs again, chained in the order they completed (each keeps its own
// landing entry).
void Connection::repostRecvs(QpLane& lane) {
  if (lane.toRepost.empty() || owner_->aborted()) return;
  for (size_t i = 0; i < lane.toRepost.size(); ++i) {
    lane.recvWrs[lane.toRepost[i]].next = i + 1 < lane.toRepost.size() ? &lane.recvWrs[lane.toRepost[i + 1]] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(lane.qp.get(), &lane.recvWrs[lane.toRepost.front()], &bad);
  lane.toRepost.clear();
  if (rc != 0) return owner_->linkFailed(peer, fmt::format("ibv_post_recv failed: {}", std::strerror(rc)));
}

bool Connection::fragmentMatches(PendingOp& op, const FragmentHeader& h) {
  const Request* req = op.req;
  Status error;
  if (h.magic != kFragmentMagic || h.bytes > shape_->payloadBytes()) {
    error = NS_ERROR(Code::kRemoteError,
                     "rank {} received a corrupt fragment header from rank {} on QP {} (magic "
                     "{:#010x}, {} bytes)",
                     rank_, peer, index, h.magic, h.bytes);
  } else if (!op.started && (h.tag != req->tag || h.total != req->bytes)) {
    error = NS_ERROR(Code::kRemoteError,
                     "rank {} received a message from rank {} with tag {:#x} and {} bytes, but the matching receive "
                     "posted by rank {} expects tag {:#x} and {} bytes: the ranks disagree about the operation "
                     "sequence",
                     rank_, peer, h.tag, h.total, rank_, req->tag, req->bytes);
  } else if (h.tag != req->tag || h.total != req->bytes || h.offset != op.offset || h.bytes > h.total - op.offset) {
    error = NS_ERROR(Code::kRemoteError,
                     "rank {} received an out-of-order fragment from rank {} on QP {} (offset {} "
                     "of {}, expected offset {})",
                     rank_, peer, index, h.offset, h.total, op.offset);
  } else {
    return true;
  }
  rejectFrontRecv(error);
  return false;
}

void Connection::rejectFrontRecv(const Status& error) {
  NS_WARN("{}", error.message());
  Request* req = recvs.front().req;
  recvs.pop();
  owner_->requestFailed(req, error);
  owner_->transportFailed(error);
}

void Connection::failAll(const Status& why) {
  for (OpRing<PendingOp>* queue : {&sends, &recvs}) {
    while (!queue->empty()) {
      Request* req = queue->front().req;
      queue->pop();
      owner_->requestFailed(req, why);
    }
  }
  failDirectSends(why);
  for (QpLane* lane : {&outbound, &inbound}) {
    lane->listed = 0;
    if (lane->qp) moveQpToError(*api_, lane->qp.get());
  }
}

void Connection::driveRecvs() {
  while (!recvs.empty() && !arrivals.empty()) {
    if (arrivals.front() != 0) {
      if (!finishDirectRecv()) return;
      continue;
    }
    const char* slot = rxRing + (slotsConsumed % shape_->slots) * shape_->slotStride;
    FragmentHeader h = FragmentHeader::load(slot);
    PendingOp& op = recvs.front();
    if (!fragmentMatches(op, h)) return;
    if (h.bytes > 0) std::memcpy(op.buf + op.offset, slot + kFragmentHeaderBytes, h.bytes);
    op.offset += h.bytes;
    op.started = true;
    arrivals.pop();
    ++slotsConsumed;
    addRelaxed(peerLink_->received, h.bytes);
    if (op.offset == h.total) {
      Request* req = op.req;
      recvs.pop();
      ++recvsDone;
      req->complete(Status());
    }
  }
}

bool Connection::sendQueueFull(const QpLane& lane) const {
  return lane.wrPosted + lane.listed - lane.wrRetired >= shape_->sendDepth || lane.listed >= lane.wrs.size();
}

void Connection::driveSends() {
  const size_t payload = shape_->payloadBytes();
  while (!sends.empty() && !sendQueueFull(outbound)) {
    PendingOp& op = sends.front();
    if (!op.started && op.region != nullptr) {
      ZeroCopyChoice choice = tryDirectSend(op);
      if (choice == ZeroCopyChoice::kWaitForOffer) return;
      if (choice == ZeroCopyChoice::kWritten) continue;
    }
    if (slotsPosted - creditsSeen >= shape_->slots) return;
    const size_t total = op.req->bytes;
    const size_t bytes = std::min(payload, total - op.offset);
    const uint64_t slotIndex = slotsPosted % shape_->slots;
    char* slot = txRing + slotIndex * shape_->slotStride;
    FragmentHeader header;
    header.bytes = static_cast<uint32_t>(bytes);
    header.tag = op.req->tag;
    header.total = total;
    header.offset = op.offset;
    header.store(slot);
    if (bytes > 0) std::memcpy(slot + kFragmentHeaderBytes, op.buf + op.offset, bytes);
    addWrite(slot, static_cast<uint32_t>(kFragmentHeaderBytes + bytes), ringLkey_,
             remoteRing + slotIndex * shape_->slotStride, remoteKey, static_cast<uint32_t>(fragsPosted & kSeqMask));
    ++fragsPosted;
    ++slotsPosted;
    op.offset += bytes;
    op.started = true;
    addRelaxed(peerLink_->sent, bytes);
    if (op.offset == total) {  // the data is in registered memory: the caller's buffer is free
      Request* req = op.req;
      sends.pop();
      ++sendsTaken;
      req->complete(Status());
    }
  }
}

ibv_send_wr& Connection::addWrite(const char* local, uint32_t bytes, uint32_t lkey, uint64_t remote, uint32_t rkey,
                                  uint32_t imm) {
  QpLane& lane = outbound;
  size_t i = lane.listed++;
  lane.sges[i] = ibv_sge{reinterpret_cast<uintptr_t>(local), bytes, lkey};
  ibv_send_wr& wr = lane.wrs[i];
  wr = ibv_send_wr{};
  wr.wr_id = makeWrId(id, false, lane.wrPosted + i, false);
  wr.sg_list = &lane.sges[i];
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htobe32(imm);
  wr.wr.rdma.remote_addr = remote;
  wr.wr.rdma.rkey = rkey;
  if (bytes <= lane.maxInline) wr.send_flags = IBV_SEND_INLINE;
  return wr;
}

void Connection::addCredit() {
  QpLane& lane = inbound;
  size_t i = lane.listed++;
  ibv_send_wr& wr = lane.wrs[i];
  wr = ibv_send_wr{};
  wr.wr_id = makeWrId(id, true, lane.wrPosted + i, false);
  wr.num_sge = 0;  // a zero-byte send: only the immediate matters
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htobe32(kCreditFlag | static_cast<uint32_t>(slotsConsumed & kSeqMask));
  creditsReported = slotsConsumed;
}

void Connection::flush(QpLane& lane) {
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
    bool endOfBurst = i == lastData && sends.empty();
    if ((wr.send_flags & IBV_SEND_SIGNALED) || (seq + 1) % shape_->signalEvery == 0 || endOfBurst) {
      wr.send_flags |= IBV_SEND_SIGNALED;
      if (i <= lastData && lastData < lane.listed) lane.drainTarget = seq + 1;  // retires data (credits don't count)
    }
    wr.next = i + 1 == lane.listed ? nullptr : &lane.wrs[i + 1];
  }
  size_t count = lane.listed;
  lane.listed = 0;
  addRelaxed(peerLink_->sentWire, wireBytes);
  if (poster_ && &lane == &outbound) {
    poster_->enqueue(lane.qp.get(), id, {lane.wrs.data(), count}, {lane.sges.data(), count});
    lane.wrPosted += count;
    return;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(lane.qp.get(), lane.wrs.data(), &bad);
  if (rc != 0) {
    return owner_->linkFailed(peer,
                              fmt::format("ibv_post_send of {} work requests on the {} QP of link {} failed: {}", count,
                                          &lane == &inbound ? "inbound" : "outbound", index, std::strerror(rc)));
  }
  lane.wrPosted += count;
}

}  // namespace nshim::ib
