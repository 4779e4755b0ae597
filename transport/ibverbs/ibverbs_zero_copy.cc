// Zero copy for the ibverbs transport: large messages between buffers the caller registered
// (Transport::registerMemory, like ncclCommRegister) go as one RDMA WRITE WITH IMMEDIATE from the
// sender's buffer straight into the receiver's, skipping both ring copies.
//
// The receiver decides. For every receive of at least NCCLSHIM_IB_ZERO_COPY_MIN bytes it sends the
// sender an offer (a SEND WITH IMMEDIATE on the link's inbound QP, landing in a per-WQE entry of the
// sender's outbound QP): the message's index on the link, its tag and size, and the buffer's
// address and rkey, or address 0 when the buffer is not registered. Message k of a link is the
// k-th send posted by one end and the k-th receive posted by the other, so both ends number them
// alike. A sender whose buffer is registered waits for the offer of its message (1 s at most, so
// that a receiver that posts late, or expects a message too small to be offered, only costs the
// copy); one that is not never waits and sends through the ring (the offer is dropped). A usable
// offer (registered, same tag and size) turns the send into one signaled write whose completion
// completes the send; the write's immediate carries the fragment sequence with the zero-copy bit,
// so the receiver, which handles arrivals in order, completes the offered receive without touching
// a slot. Any other offer sends the message through the ring, where the receiver checks it as
// always. At most `offersAhead` offers per link are outstanding, which bounds the sender's landing
// entries.
#include <endian.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/log.h"
#include "transport/ibverbs/ibverbs_transport_impl.h"

namespace nshim::ib {
namespace {

constexpr size_t kMaxDirectBytes = size_t{1} << 30;  // one write's length is a 32-bit field
constexpr int64_t kOfferWaitNs = 1'000'000'000;      // how long a registered send waits for its offer

// Drops the offers for messages that went through the ring before their offer was used.
void dropOffersAlreadySent(Connection& c) {
  while (!c.offers.empty() && c.offers.front().index < c.sendsTaken) c.offers.pop();
}

}  // namespace

Status IbverbsTransport::registerMemory(const void* buf, size_t bytes) {
  if (buf == nullptr || bytes == 0) {
    return NS_ERROR(Code::kInvalidArgument, "rank {}: cannot register {} bytes at {}", rank_, bytes, buf);
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buf);
  const uintptr_t end = begin + bytes;
  auto overlapLocked = [&]() -> Status {
    for (const UserRegion& r : regions_) {
      if (begin < r.end && r.begin < end) {
        return NS_ERROR(Code::kInvalidArgument, "rank {}: [{:#x}, {:#x}) overlaps the registered [{:#x}, {:#x})", rank_,
                        begin, end, r.begin, r.end);
      }
    }
    return Status::Ok();
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    NS_RETURN_IF_ERROR(overlapLocked());
  }
  // Pinning a large buffer takes a while: transfers keep progressing meanwhile.
  MrPtr mr(api_.regMr(res_->pd.get(), const_cast<void*>(buf), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!mr) {
    return NS_ERROR(Code::kSystemError,
                    "rank {}: ibv_reg_mr of {} bytes at {} on {} failed: {} (is the locked-memory "
                    "limit, ulimit -l, too low?)",
                    rank_, bytes, buf, res_->device.name, std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  NS_RETURN_IF_ERROR(overlapLocked());  // another thread may have registered an overlapping range meanwhile
  regions_.push_back(UserRegion{begin, end, std::move(mr)});
  return Status::Ok();
}

Status IbverbsTransport::deregisterMemory(const void* buf) {
  MrPtr released;  // deregistered after the lock is dropped
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(regions_.begin(), regions_.end(),
                         [&](const UserRegion& r) { return r.begin == reinterpret_cast<uintptr_t>(buf); });
  if (it == regions_.end()) {
    return NS_ERROR(Code::kInvalidArgument, "rank {}: no registration starts at {}", rank_, buf);
  }
  const ibv_mr* mr = it->mr.get();
  for (Connection& c : res_->connections) {
    bool inUse = false;
    for (size_t i = 0; i < c.sends.size(); ++i) inUse = inUse || c.sends.at(i).region == mr;
    for (size_t i = 0; i < c.recvs.size(); ++i) inUse = inUse || c.recvs.at(i).region == mr;
    for (size_t i = 0; i < c.directSends.size(); ++i) inUse = inUse || c.directSends.at(i).region == mr;
    if (inUse && !aborted_ && !peers_[c.peer].lost) {
      return NS_ERROR(Code::kInvalidUsage, "rank {}: the registration at {} is still in use by transfers with rank {}",
                      rank_, buf, c.peer);
    }
  }
  released = std::move(it->mr);
  regions_.erase(it);
  return Status::Ok();
}

const ibv_mr* IbverbsTransport::regionHolding(const char* buf, size_t bytes) const {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buf);
  for (const UserRegion& r : regions_) {
    if (r.begin <= begin && begin + bytes <= r.end) return r.mr.get();
  }
  return nullptr;
}

// A peer that has received everything may exit, and close its socket, before the acknowledgements
// of our last zero-copy writes to it have completed here (its side completes on arrival). When
// nothing else is pending with the peer, those sends end as done, as ring sends do once staged,
// after their QP is moved to error so that the NIC reads the buffers no more. Without this a
// rank that merely finished first failed its neighbour's last send.
void IbverbsTransport::completeDirectSendsTo(int peer) {
  for (int index = 0; index < linksPerPeer_; ++index) {
    const Connection& c = connection(peer, static_cast<uint64_t>(index));
    if (!c.sends.empty() || !c.recvs.empty()) return;
  }
  for (int index = 0; index < linksPerPeer_; ++index) {
    Connection& c = connection(peer, static_cast<uint64_t>(index));
    if (c.directSends.empty()) continue;
    moveQpToError(api_, c.outbound.qp.get());  // before the buffers are handed back
    c.completeDirectSendsNow();
  }
}

// An offer arrived in a landing entry: keep it for the send it names.
bool Connection::takeOffer(const char* landing, uint32_t bytes, uint32_t seq) {
  std::atomic_thread_fence(std::memory_order_acquire);  // the entry's contents after its completion
  Offer offer;
  if (bytes != kOfferBytes || !Offer::load(landing, &offer) || seq != (offersSeen & kSeqMask)) {
    owner_->linkFailed(peer, fmt::format("a malformed zero-copy offer arrived on link {} ({} bytes, offer {} where {} "
                                         "was due)",
                                         index, bytes, seq, offersSeen & kSeqMask));
    return false;
  }
  ++offersSeen;
  dropOffersAlreadySent(*this);
  if (offer.index >= sendsTaken) offers.push(offer);  // else its message went through the ring already
  owner_->activate(*this);
  return true;
}

// Offers for the posted receives not decided yet, in order, as far as the window and the inbound
// QP's send queue allow.
void Connection::addOffers() {
  recvsOffered = std::max(recvsOffered, recvsDone);
  QpLane& lane = inbound;
  while (recvsOffered < recvsDone + recvs.size()) {
    PendingOp& op = recvs.at(recvsOffered - recvsDone);
    if (shape_->zeroCopyMin == 0 || op.req->bytes < shape_->zeroCopyMin || op.started) {
      ++recvsOffered;  // no sender waits for this one
      continue;
    }
    if (recvsOffered >= recvsDone + shape_->offersAhead || sendQueueFull(lane)) return;
    Offer offer;
    offer.index = recvsOffered;
    offer.bytes = op.req->bytes;
    offer.tag = op.req->tag;
    if (op.region != nullptr && op.req->bytes <= kMaxDirectBytes) {
      offer.address = reinterpret_cast<uintptr_t>(op.buf);
      offer.rkey = op.region->rkey;
      op.offered = true;
    }
    size_t i = lane.listed++;
    uint64_t seq = lane.wrPosted + i;
    // Entry seq % sendDepth is free: the send queue holds fewer than sendDepth requests.
    char* entry = lane.staging + (seq % shape_->sendDepth) * kControlSlotBytes;
    offer.store(entry);
    lane.sges[i] = ibv_sge{reinterpret_cast<uintptr_t>(entry), static_cast<uint32_t>(kOfferBytes), ringLkey_};
    ibv_send_wr& wr = lane.wrs[i];
    wr = ibv_send_wr{};
    wr.wr_id = makeWrId(id, true, seq, false);
    wr.sg_list = &lane.sges[i];
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htobe32(kCreditFlag | kOfferFlag | static_cast<uint32_t>(offersSent & kSeqMask));
    if (kOfferBytes <= lane.maxInline) wr.send_flags = IBV_SEND_INLINE;
    ++offersSent;
    ++recvsOffered;
  }
}

// The front send's buffer is registered (post() looks for a region only from the zero-copy size
// on) and it has not started: write it straight into the receiver's buffer if the receiver's offer
// allows.
Connection::ZeroCopyChoice Connection::tryDirectSend(PendingOp& op) {
  const size_t bytes = op.req->bytes;
  dropOffersAlreadySent(*this);
  if (offers.empty()) {
    // Not offered yet: wait a little (the receiver may not have posted), then use the ring. A late
    // offer is dropped, and its receive takes the ring's fragments as any other.
    const int64_t now = nowNs();
    if (op.offerWaitStartNs == 0) op.offerWaitStartNs = now;
    return now - op.offerWaitStartNs < kOfferWaitNs ? ZeroCopyChoice::kWaitForOffer : ZeroCopyChoice::kUseRing;
  }
  // An offer for a later message means none comes for this one: the receiver expects fewer bytes
  // than the zero-copy size, and its fragment header check will say so.
  if (offers.front().index > sendsTaken) return ZeroCopyChoice::kUseRing;
  const Offer offer = offers.front();
  offers.pop();
  if (offer.address == 0 || offer.bytes != bytes || offer.tag != op.req->tag || bytes > kMaxDirectBytes) {
    return ZeroCopyChoice::kUseRing;  // a mismatch is reported by the receiver, from the fragment header
  }
  const uint64_t seq = outbound.wrPosted + outbound.listed;  // of the write added next
  ibv_send_wr& wr = addWrite(op.buf, static_cast<uint32_t>(bytes), op.region->lkey, offer.address, offer.rkey,
                             kDirectFlag | static_cast<uint32_t>(fragsPosted & kSeqMask));
  wr.send_flags |= IBV_SEND_SIGNALED;  // its completion frees the caller's buffer
  directSends.push(DirectSend{op.req, seq + 1, op.region});
  ++fragsPosted;
  addRelaxed(peerLink_->sent, bytes);
  sends.pop();
  ++sendsTaken;
  return ZeroCopyChoice::kWritten;
}

void Connection::completeDirectSends() {
  while (!directSends.empty() && directSends.front().wrEnd <= outbound.wrRetired) {
    Request* req = directSends.front().req;
    directSends.pop();
    req->complete(Status());
  }
}

// The next arrival is a zero-copy write: it completes the front receive, which must be the one offered.
bool Connection::finishDirectRecv() {
  PendingOp& op = recvs.front();
  Request* req = op.req;
  if (!op.offered || op.started) {
    rejectFrontRecv(NS_ERROR(Code::kRemoteError,
                             "rank {} received a zero-copy write from rank {} on link {} for a "
                             "receive it did not offer",
                             rank_, peer, index));
    return false;
  }
  arrivals.pop();
  addRelaxed(peerLink_->received, req->bytes);
  addRelaxed(peerLink_->receivedZeroCopy, req->bytes);
  recvs.pop();
  ++recvsDone;
  req->complete(Status());
  return true;
}

void Connection::failDirectSends(const Status& why) {
  while (!directSends.empty()) {
    Request* req = directSends.front().req;
    directSends.pop();
    owner_->requestFailed(req, why);
  }
}

void Connection::completeDirectSendsNow() {
  while (!directSends.empty()) {
    Request* req = directSends.front().req;
    directSends.pop();
    req->complete(Status());
  }
}

}  // namespace nshim::ib
