// Reliable-connected queue pairs of the ibverbs transport: creation, the canonical RC state
// changes of rdma-core's rc_pingpong and perftest (RESET -> INIT -> RTR -> RTS with their attribute
// masks), and the endpoint record that two ranks exchange over their bootstrap socket to connect a
// pair of QPs (QP number, PSN, LID, GID, MTU, and the receive ring's address and rkey).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "transport/ibverbs/ibverbs_device.h"
#include "transport/ibverbs/ibverbs_resources.h"

namespace nshim {

// What one side tells the other about one QP. Little-endian, fixed size on the wire.
struct QpEndpoint {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t lid = 0;
  uint8_t mtu = 0;  // enum ibv_mtu of the sender's port
  uint8_t gid[16] = {};
  uint64_t ringAddress = 0;  // where the peer writes this QP's incoming fragments
  uint32_t ringKey = 0;
  static constexpr size_t kWireBytes = 4 + 4 + 2 + 1 + 16 + 8 + 4;

  void encode(uint8_t* out) const;
  static QpEndpoint decode(const uint8_t* in);
};

struct QpShape {
  uint32_t sendDepth = 64;
  uint32_t recvDepth = 64;
  uint32_t maxInline = 128;  // asked for; the device may grant less or refuse (then 0)
};

struct QpPathOptions {
  int trafficClass = 0;  // NCCLSHIM_IB_TC
  int serviceLevel = 0;  // NCCLSHIM_IB_SL
  int timeout = 14;      // local ACK timeout: 4.096 us * 2^timeout
  int retryCount = 7;
  int rnrRetry = 7;  // 7 = retry forever
};

// Creates an RC QP on `cq` (send and receive) and moves it to INIT. `grantedInline` receives the
// inline size the device granted.
Result<QpPtr> createRcQp(const VerbsApi& api, ibv_pd* pd, ibv_cq* cq, const OpenDevice& device, QpShape shape,
                         uint32_t* grantedInline);

// INIT -> RTR -> RTS towards `remote`. Path MTU: the smaller of the two ports' active MTUs.
Status connectRcQp(const VerbsApi& api, ibv_qp* qp, const OpenDevice& device, const QpEndpoint& local,
                   const QpEndpoint& remote, const QpPathOptions& path, const std::string& peerName);

// Moves a QP to the error state (flushing its work requests); errors are ignored.
void moveQpToError(const VerbsApi& api, ibv_qp* qp);

}  // namespace nshim
