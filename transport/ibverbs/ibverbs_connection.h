// Internal state of the ibverbs transport: the fragment header in each ring slot, the immediate
// data encodings, the pending operations of one QP in each direction with its ring and credit
// counters, and the verbs objects of one rank in creation order (so they are destroyed in reverse).
#pragma once

#include <endian.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/status.h"
#include "transport/ibverbs/ibverbs_device.h"
#include "transport/ibverbs/ibverbs_qp.h"
#include "transport/ibverbs/ibverbs_resources.h"
#include "transport/core/op_ring.h"
#include "transport/core/peer_link.h"
#include "transport/bootstrap/socket.h"
#include "transport/core/transport.h"

namespace nshim::ib {

inline constexpr uint32_t kFragmentMagic = 0x4E534942;  // "NSIB"
inline constexpr size_t kFragmentHeaderBytes = 32;

// Little-endian in the slot, before the payload.
struct FragmentHeader {
  uint32_t magic = kFragmentMagic;
  uint32_t bytes = 0;   // payload bytes of this fragment
  uint64_t tag = 0;
  uint64_t total = 0;   // bytes of the whole message
  uint64_t offset = 0;  // of this fragment in the message

  void store(char* slot) const {
    uint32_t words[2] = {htole32(magic), htole32(bytes)};
    uint64_t longs[3] = {htole64(tag), htole64(total), htole64(offset)};
    std::memcpy(slot, words, 8);
    std::memcpy(slot + 8, longs, 24);
  }
  static FragmentHeader load(const char* slot) {
    FragmentHeader h;
    uint32_t words[2];
    uint64_t longs[3];
    std::memcpy(words, slot, 8);
    std::memcpy(longs, slot + 8, 24);
    h.magic = le32toh(words[0]);
    h.bytes = le32toh(words[1]);
    h.tag = le64toh(longs[0]);
    h.total = le64toh(longs[1]);
    h.offset = le64toh(longs[2]);
    return h;
  }
};

// Immediate data. The top bit marks a control message (on a link's outbound QP, from the peer):
// a credit carries the peer's count of freed slots, an offer (bit 30) the count of offers; a data
// write carries its sequence number, with bit 30 set when it went straight into the receiver's
// buffer (zero copy) rather than into a ring slot. Counters travel modulo 2^30.
inline constexpr uint32_t kCreditFlag = 0x80000000u;
inline constexpr uint32_t kOfferFlag = 0x40000000u;   // with kCreditFlag: an offer
inline constexpr uint32_t kDirectFlag = 0x40000000u;  // without kCreditFlag: a zero-copy write
inline constexpr uint32_t kSeqMask = 0x3fffffffu;

// An offer, sent by the receiver of every message of at least the zero-copy size: where the
// sender may write message `index` of the link (counted from 0 in posting order on both ends), or
// address 0 when the receive buffer is not registered. Little-endian in the landing buffer.
inline constexpr uint32_t kOfferMagic = 0x4E53524F;  // "NSRO"
inline constexpr size_t kOfferBytes = 40;
inline constexpr size_t kControlSlotBytes = 64;  // one offer landing or staging entry
struct Offer {
  uint64_t index = 0;
  uint64_t address = 0;  // 0: not registered, send through the ring
  uint32_t rkey = 0;
  uint64_t bytes = 0;
  uint64_t tag = 0;

  void store(char* out) const {
    uint32_t words[2] = {htole32(kOfferMagic), htole32(rkey)};
    uint64_t longs[4] = {htole64(index), htole64(address), htole64(bytes), htole64(tag)};
    std::memcpy(out, words, 8);
    std::memcpy(out + 8, longs, 32);
  }
  // False when the bytes are not an offer.
  static bool load(const char* in, Offer* offer) {
    uint32_t words[2];
    uint64_t longs[4];
    std::memcpy(words, in, 8);
    std::memcpy(longs, in + 8, 32);
    if (le32toh(words[0]) != kOfferMagic) return false;
    offer->rkey = le32toh(words[1]);
    offer->index = le64toh(longs[0]);
    offer->address = le64toh(longs[1]);
    offer->bytes = le64toh(longs[2]);
    offer->tag = le64toh(longs[3]);
    return true;
  }
};

// wr_id: the connection's index in the top 16 bits, a receive flag, a lane flag (the inbound QP),
// then the sequence number of a send work request, or a receive's index in the lane's receive list.
inline constexpr int kWrIdShift = 48;
inline constexpr uint64_t kWrIdRecv = uint64_t(1) << 47;
inline constexpr uint64_t kWrIdInbound = uint64_t(1) << 46;
inline constexpr uint64_t kWrIdSeqMask = kWrIdInbound - 1;
inline uint64_t makeWrId(size_t connection, bool inbound, uint64_t seq, bool isRecv) {
  return (uint64_t(connection) << kWrIdShift) | (isRecv ? kWrIdRecv : 0) | (inbound ? kWrIdInbound : 0) |
         (seq & kWrIdSeqMask);
}

struct PendingOp {
  Request* req = nullptr;
  char* buf = nullptr;
  size_t offset = 0;     // payload bytes moved so far
  bool started = false;  // a fragment has moved (zero-byte messages have exactly one)
  bool offered = false;  // a receive whose buffer was offered for a zero-copy write
  const ibv_mr* region = nullptr;  // the registration holding the whole buffer, if any
  int64_t offerWaitStartNs = 0;    // a registered send: since when it waits for the receiver's offer
};

// A zero-copy send written straight from the caller's buffer: done when its write completes.
struct DirectSend {
  Request* req = nullptr;
  uint64_t wrEnd = 0;  // the outbound lane's wrRetired at which the write is known complete
  const ibv_mr* region = nullptr;
};

// One RC QP of a connection and its queue accounting; work requests built in a pass are posted
// together as one list.
struct QpLane {
  QpPtr qp;
  uint32_t qpn = 0;
  uint32_t maxInline = 0;
  std::vector<uint32_t> toRepost;  // receive WQEs consumed (their index in recvWrs), to post again
  uint64_t wrPosted = 0;   // posted to the QP (sequence of the next one)
  uint64_t wrRetired = 0;  // known complete (a signaled completion retires all before it)
  uint64_t drainTarget = 0;  // retire up to here before teardown (last signaled data request + 1)
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  std::vector<ibv_recv_wr> recvWrs;  // one per receive WQE; the outbound lane's land offers in `landing`
  std::vector<ibv_sge> recvSges;
  char* landing = nullptr;  // kControlSlotBytes per receive WQE (outbound lane; registered)
  char* staging = nullptr;  // kControlSlotBytes per send WQE, for offers that do not fit inline
  size_t listed = 0;  // work requests in the pending list
};

// One link to a peer, as two RC QPs: `outbound` carries our data writes (the peer's credits for
// them come back on its receive queue) and `inbound` brings the peer's data writes (our credits go
// back on its send queue). A credit therefore never queues behind data going the same way, which
// with one QP for both directions held each credit back by the whole window of reverse traffic
// (NCCL keeps send and receive connections apart for the same reason).
struct Connection {
  size_t id = 0;  // index in the transport's connection list (the wr_id prefix)
  int peer = -1;
  int index = 0;  // link index within the peer
  QpLane outbound;
  QpLane inbound;
  char* txRing = nullptr;  // local staging slots (registered)
  char* rxRing = nullptr;  // where the peer writes (registered, remote-writable)
  uint64_t remoteRing = 0;
  uint32_t remoteKey = 0;

  // Send direction.
  OpRing<PendingOp> sends;
  OpRing<DirectSend> directSends;  // zero-copy writes in flight
  OpRing<Offer> offers;            // the peer's offers for messages not sent yet
  uint64_t sendsTaken = 0;   // messages taken off `sends` (the front's index)
  uint64_t fragsPosted = 0;   // data writes handed to the QP (ring fragments and zero-copy writes)
  uint64_t slotsPosted = 0;   // ring fragments among them
  uint64_t creditsSeen = 0;   // of those, how many the peer has freed
  uint64_t offersSeen = 0;

  // Receive direction.
  OpRing<PendingOp> recvs;
  OpRing<uint8_t> arrivals;  // for each data write arrived and not consumed: 1 if it went zero-copy
  uint64_t recvsDone = 0;    // messages received (the front's index)
  uint64_t recvsOffered = 0; // messages whose offer is decided (sent, or none needed)
  uint64_t offersSent = 0;
  uint64_t fragsArrived = 0;   // data writes arrived (those not consumed yet are in `arrivals`)
  uint64_t slotsConsumed = 0;
  uint64_t creditsReported = 0;

  bool active = false;  // in the transport's active list
  bool hasQps() const { return outbound.qp != nullptr; }
  QpLane& lane(bool isInbound) { return isInbound ? inbound : outbound; }
};


// Geometry and tuning shared by every connection of one transport.
struct RingShape {
  uint32_t slots = 4;
  uint64_t zeroCopyMin = 0;  // messages from this size on get offers (0: no zero copy)
  uint32_t offersAhead = 8;  // offers outstanding per link at most
  uint32_t fragmentBytes = 1 << 20;  // payload of one slot
  uint32_t slotStride = (1 << 20) + 64;  // header + payload, rounded up to 64 bytes
  uint32_t signalEvery = 8;
  uint32_t sendDepth = 0;  // QP send queue size
  uint32_t recvDepth = 0;  // QP receive queue size (data fragments + credits in flight)
  size_t payloadBytes() const { return fragmentBytes; }
};

// Everything one rank owns, declared in creation order: destruction runs bottom-up (QPs, CQ,
// channel, MR, memory, PD, context), as verbs require.
struct IbResources {
  const VerbsApi* api = nullptr;
  OpenDevice device;
  PdPtr pd;
  PinnedBuffer memory;
  MrPtr mr;
  ChannelPtr channel;
  CqPtr cq;
  // [peer * qpsPerPeer + index]; the entries of its own rank and of peers left out have no QPs.
  std::vector<Connection> connections;
  // Bootstrap socket per connected peer (endpoint exchange, then liveness); invalid for the others.
  std::vector<Fd> peerSockets;

  int connectedPeerCount() const {
    int count = 0;
    for (const Fd& fd : peerSockets) count += fd.valid() ? 1 : 0;
    return count;
  }
};

// The transport over connected resources (ibverbs_transport.cc).
std::unique_ptr<Transport> makeIbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks,
                                                int qpsPerPeer, const RingShape& shape, int spinMicroseconds,
                                                bool postThread);

}  // namespace nshim::ib
