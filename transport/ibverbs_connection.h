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
#include "transport/ibverbs_device.h"
#include "transport/ibverbs_qp.h"
#include "transport/ibverbs_resources.h"
#include "transport/op_ring.h"
#include "transport/peer_link.h"
#include "transport/socket.h"
#include "transport/transport.h"

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

// Immediate data: a data fragment carries its sequence number, a credit its count of freed slots,
// both modulo 2^31; the top bit tells them apart.
inline constexpr uint32_t kCreditFlag = 0x80000000u;
inline constexpr uint32_t kSeqMask = 0x7fffffffu;

// wr_id: the connection's index in the top 16 bits, a receive flag, a lane flag (the inbound QP),
// then the sequence number of a send work request (receives carry 0).
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
};

// One RC QP of a connection and its queue accounting; work requests built in a pass are posted
// together as one list.
struct QpLane {
  QpPtr qp;
  uint32_t qpn = 0;
  uint32_t maxInline = 0;
  uint32_t recvsToRepost = 0;  // receive WQEs consumed, to post again
  uint64_t wrPosted = 0;   // posted to the QP (sequence of the next one)
  uint64_t wrRetired = 0;  // known complete (a signaled completion retires all before it)
  uint64_t drainTarget = 0;  // retire up to here before teardown (last signaled data request + 1)
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  std::vector<ibv_recv_wr> recvWrs;  // a prebuilt chain of zero-SGE receives, posted as a list
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
  uint64_t fragsPosted = 0;  // data fragments handed to the QP
  uint64_t creditsSeen = 0;  // of those, how many the peer has freed

  // Receive direction.
  OpRing<PendingOp> recvs;
  uint64_t fragsArrived = 0;
  uint64_t fragsConsumed = 0;
  uint64_t creditsReported = 0;

  bool active = false;  // in the transport's active list
  bool hasQps() const { return outbound.qp != nullptr; }
  QpLane& lane(bool isInbound) { return isInbound ? inbound : outbound; }
};


// Geometry and tuning shared by every connection of one transport.
struct RingShape {
  uint32_t slots = 4;
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
  std::vector<Connection> connections;  // [peer * qpsPerPeer + index]; own rank's entries unused
  std::vector<Fd> peerSockets;          // bootstrap socket per peer: endpoint exchange, then liveness
};

// The transport over connected resources (ibverbs_transport.cc).
std::unique_ptr<Transport> makeIbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks,
                                                int qpsPerPeer, const RingShape& shape, int spinMicroseconds,
                                                bool postThread);

}  // namespace nshim::ib
