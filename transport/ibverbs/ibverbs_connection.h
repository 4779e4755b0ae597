// One link of the ibverbs transport to a peer (Connection: two RC QPs, a ring each way, credits,
// zero-copy offers) and the methods that move its data (ibverbs_connection.cc: the rings, credits
// and post lists; ibverbs_zero_copy.cc: offers and writes straight into the receiver's buffer);
// what a link asks of the transport that owns it (LinkOwner); and the verbs objects of one rank in
// creation order (so they are destroyed in reverse). What travels on a link: ibverbs_wire.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/socket.h"
#include "transport/core/op_ring.h"
#include "transport/core/peer_link.h"
#include "transport/core/transport.h"
#include "transport/ibverbs/ibverbs_device.h"
#include "transport/ibverbs/ibverbs_poster.h"
#include "transport/ibverbs/ibverbs_qp.h"
#include "transport/ibverbs/ibverbs_resources.h"
#include "transport/ibverbs/ibverbs_wire.h"

namespace nshim::ib {

class Connection;

struct PendingOp {
  Request* req = nullptr;
  char* buf = nullptr;
  size_t offset = 0;               // payload bytes moved so far
  bool started = false;            // a fragment has moved (zero-byte messages have exactly one)
  bool offered = false;            // a receive whose buffer was offered for a zero-copy write
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
  uint64_t wrPosted = 0;           // posted to the QP (sequence of the next one)
  uint64_t wrRetired = 0;          // known complete (a signaled completion retires all before it)
  uint64_t drainTarget = 0;        // retire up to here before teardown (last signaled data request + 1)
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  std::vector<ibv_recv_wr> recvWrs;  // one per receive WQE; the outbound lane's land offers in `landing`
  std::vector<ibv_sge> recvSges;
  char* landing = nullptr;  // kControlSlotBytes per receive WQE (outbound lane; registered)
  char* staging = nullptr;  // kControlSlotBytes per send WQE, for offers that do not fit inline
  size_t listed = 0;        // work requests in the pending list
};

// Geometry and tuning shared by every connection of one transport.
struct RingShape {
  uint32_t slots = 4;
  uint32_t qpsPerConnection = 1;         // links per channel group (NCCL_IB_QPS_PER_CONNECTION; PeerLink::nextLink)
  bool splitDataOnQps = false;           // every message cut over its group's links (NCCL_IB_SPLIT_DATA_ON_QPS)
  uint64_t zeroCopyMin = 0;              // messages from this size on get offers (0: no zero copy)
  uint32_t offersAhead = 8;              // offers outstanding per link at most
  uint32_t fragmentBytes = 1 << 20;      // payload of one slot
  uint32_t slotStride = (1 << 20) + 64;  // header + payload, rounded up to 64 bytes
  uint32_t signalEvery = 8;
  uint32_t sendDepth = 0;  // QP send queue size
  uint32_t recvDepth = 0;  // QP receive queue size (data fragments + credits in flight)
  size_t payloadBytes() const { return fragmentBytes; }
};

// What a connection asks of the transport that owns it; called under the transport's mutex.
class LinkOwner {
 public:
  // The link's peer is lost (a failed completion or post, a malformed arrival): fail what it owes.
  virtual void linkFailed(int peer, const std::string& detail) = 0;
  // Fails one request (taken off its queue already).
  virtual void requestFailed(Request* req, const Status& why) = 0;
  // The ranks disagree (a message that does not match its receive): abort the whole transport.
  virtual void transportFailed(const Status& why) = 0;
  // The connection has work: put it on the active list (its next progress pass services it).
  virtual void activate(Connection& c) = 0;
  virtual bool aborted() const = 0;

 protected:
  ~LinkOwner() = default;
};

// One link to a peer, as two RC QPs: `outbound` carries our data writes (the peer's credits for
// them come back on its receive queue) and `inbound` brings the peer's data writes (our credits go
// back on its send queue). A credit therefore never queues behind data going the same way, which
// with one QP for both directions held each credit back by the whole window of reverse traffic
// (NCCL keeps send and receive connections apart for the same reason). The state is set up by
// ibverbs_connect.cc; the methods run under the owning transport's mutex.
class Connection {
 public:
  // Called once by the transport that owns the link, before any other method.
  void attach(LinkOwner& owner, PeerLink& peerLink, const RingShape& shape, const VerbsApi& api, uint32_t ringLkey,
              WritePoster* poster, int rank) {
    owner_ = &owner;
    peerLink_ = &peerLink;
    shape_ = &shape;
    api_ = &api;
    ringLkey_ = ringLkey;
    poster_ = poster;
    rank_ = rank;
  }

  // ---- The ring data path (ibverbs_connection.cc).
  // A completion of one of the link's work requests (success or not).
  void onCompletion(const ibv_wc& wc, int qpsPerPeer);
  // Reposts consumed receives, finishes zero-copy sends, copies arrivals into receives, offers,
  // starts sends, returns credit, then posts one list per QP.
  void service();
  void driveRecvs();
  // Requests queued or writes in flight on this link.
  bool owesRequests() const { return !sends.empty() || !recvs.empty() || !directSends.empty(); }
  // Anything left for a progress pass to do (the transport drops the link from its active list when not).
  bool busy() const {
    return owesRequests() || slotsConsumed != creditsReported || !outbound.toRepost.empty() ||
           !inbound.toRepost.empty() || outbound.listed > 0 || inbound.listed > 0;
  }
  // Fails every request of the link with `why` and moves its QPs to error.
  void failAll(const Status& why);

  // ---- Zero copy (ibverbs_zero_copy.cc).
  void failDirectSends(const Status& why);
  // Completes the zero-copy sends in flight without waiting for their writes (the peer has gone
  // after receiving everything); the caller has moved the outbound QP to error.
  void completeDirectSendsNow();

  // ---- State.
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
  uint64_t sendsTaken = 0;         // messages taken off `sends` (the front's index)
  uint64_t fragsPosted = 0;        // data writes handed to the QP (ring fragments and zero-copy writes)
  uint64_t slotsPosted = 0;        // ring fragments among them
  uint64_t creditsSeen = 0;        // of those, how many the peer has freed
  uint64_t offersSeen = 0;

  // Receive direction.
  OpRing<PendingOp> recvs;
  OpRing<uint8_t> arrivals;   // for each data write arrived and not consumed: 1 if it went zero-copy
  uint64_t recvsDone = 0;     // messages received (the front's index)
  uint64_t recvsOffered = 0;  // messages whose offer is decided (sent, or none needed)
  uint64_t offersSent = 0;
  uint64_t fragsArrived = 0;  // data writes arrived (those not consumed yet are in `arrivals`)
  uint64_t slotsConsumed = 0;
  uint64_t creditsReported = 0;

  bool active = false;  // in the transport's active list
  bool hasQps() const { return outbound.qp != nullptr; }
  QpLane& lane(bool isInbound) { return isInbound ? inbound : outbound; }

 private:
  enum class ZeroCopyChoice { kWritten, kUseRing, kWaitForOffer };

  void repostRecvs(QpLane& lane);
  void driveSends();
  bool sendQueueFull(const QpLane& lane) const;
  // A data write from `local` (lkey) to `remote` (rkey) with immediate `imm`, added to the outbound list.
  ibv_send_wr& addWrite(const char* local, uint32_t bytes, uint32_t lkey, uint64_t remote, uint32_t rkey, uint32_t imm);
  void addCredit();
  void flush(QpLane& lane);
  bool fragmentMatches(PendingOp& op, const FragmentHeader& h);
  // Fails the front receive with a mismatch and aborts the transport.
  void rejectFrontRecv(const Status& error);

  bool takeOffer(const char* landing, uint32_t bytes, uint32_t seq);
  void addOffers();
  ZeroCopyChoice tryDirectSend(PendingOp& op);
  void completeDirectSends();
  bool finishDirectRecv();

  LinkOwner* owner_ = nullptr;
  PeerLink* peerLink_ = nullptr;  // the peer's counters and failure state, in the transport
  const RingShape* shape_ = nullptr;
  const VerbsApi* api_ = nullptr;
  uint32_t ringLkey_ = 0;          // of the rings' registered memory
  WritePoster* poster_ = nullptr;  // null: post inline
  int rank_ = -1;
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
  // [peer * links per peer + index]; the entries of its own rank and of peers left out have no QPs.
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
                                                int linksPerPeer, const RingShape& shape, int spinMicroseconds,
                                                bool postThread);

}  // namespace nshim::ib
