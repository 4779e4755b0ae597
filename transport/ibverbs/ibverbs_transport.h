// The ibverbs (RoCE v2 / InfiniBand) transport: `qpsPerPeer` x `qpsPerConnection` links between every pair of ranks,
// each two reliable-connected QPs (A's outbound QP to B's inbound one carries A's data and B's
// credits for it, and the other pair the reverse, so a credit never waits behind data going its
// way), set up through the TCP bootstrap (one socket per peer carries the QP endpoints and then
// serves as a liveness signal: its end of stream means the peer is gone). A message from rank A to
// rank B of NCCL channel c travels in link group c % qpsPerPeer, on the group's links in turn
// (NCCL_IB_QPS_PER_CONNECTION: NCCL's QPs per connection, requests round robin; with
// NCCL_IB_SPLIT_DATA_ON_QPS=1 every message is cut over all of them, split_data_on_qps.h), as fragments of up to `slotBytes` (default 1 MiB, so a
// collective slice is one fragment): each is copied into a registered send slot and RDMA-written
// WITH IMMEDIATE into the matching slot of B's registered receive ring for that link, after a
// 32-byte header {magic, fragment bytes, tag, message bytes, offset} that B checks against its
// posted receive. A send completes once its last fragment is staged (the caller's buffer is free
// again). B copies a fragment out once the receive is posted and returns the slot as a credit (a
// zero-byte SEND WITH IMMEDIATE carrying its count of freed slots); A has `slots` fragments in
// flight per link at most. Work requests go out as post lists, signaled one in `signalEvery` and at
// the end of each burst of data (teardown waits for those, so no data is lost when a rank exits
// right after its last send); fragments that fit the QP's inline size are sent inline. Progress is
// driven by the waiting thread: poll the CQ for NCCLSHIM_SPIN_US, then sleep on the completion
// channel and the bootstrap sockets of the peers it waits for. On soft-RoCE the data writes are
// posted from a thread of their own (ibverbs_poster.h says why). Messages between buffers the
// caller registered (registerMemory) skip the rings: one write from the sender's buffer straight
// into the receiver's, after the receiver's offer of its address (ibverbs_zero_copy.cc). Only
// ibverbs_*.{h,cc} and verbs_loader.* see <infiniband/verbs.h>; libibverbs is dlopen'ed when a
// transport is first created, so nothing links against it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/socket.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/core/transport.h"

namespace nshim {

struct IbverbsOptions {
  std::string hca;                // NCCLSHIM_IB_HCA: device[:port] like NCCL_IB_HCA; "" = by address; a
                                  // list gives local rank i entry i mod length (nic_list.h)
  int gidIndex = -1;              // NCCLSHIM_IB_GID_INDEX: -1 = scan for RoCE v2, IPv4-mapped
  int trafficClass = 0;           // NCCLSHIM_IB_TC
  int serviceLevel = 0;           // NCCLSHIM_IB_SL
  int qpsPerPeer = 1;             // NCCLSHIM_IB_QPS_PER_PEER: link groups per peer (a message's channel picks one)
  int qpsPerConnection = 1;       // NCCL_IB_QPS_PER_CONNECTION: links per group, taken in turn (2 QPs each)
  bool splitDataOnQps = false;    // NCCL_IB_SPLIT_DATA_ON_QPS: every message cut over all links of its group
  int slots = 4;                  // NCCLSHIM_IB_SLOTS: receive ring slots (credits) per link
  size_t slotBytes = 1 << 20;     // NCCLSHIM_IB_SLOT_BYTES: payload bytes per slot (fragment size)
  int signalEvery = 8;            // NCCLSHIM_IB_SIGNAL_EVERY: one signaled work request in N
  size_t zeroCopyMin = 64 << 10;  // NCCLSHIM_IB_ZERO_COPY_MIN: messages from this size between registered
                                  // buffers are written straight into the receiver's buffer; 0 = never
  int ibTimeout = 14;             // NCCLSHIM_IB_TIMEOUT: local ACK timeout exponent
  int retryCount = 7;             // NCCLSHIM_IB_RETRY_CNT
  double timeoutSeconds = 300;    // NCCLSHIM_TIMEOUT: bootstrap and connection waits
  int spinMicroseconds = 100;     // NCCLSHIM_SPIN_US: CQ busy-poll before sleeping on the channel
  // NCCLSHIM_SOCKET_IFNAME / _FAMILY: the interface of the TCP bootstrap (QP endpoints, liveness)
  SocketInterface bootstrapInterface = SocketInterface::fromEnvironment();
  int postThread = -1;  // NCCLSHIM_IB_POST_THREAD: 1 post data writes from a thread, 0 inline,
                        // -1 (auto) a thread on soft-RoCE, whose ibv_post_send blocks

  static IbverbsOptions fromEnvironment();
};

// Bootstraps rank `rank` of `nranks` through the root named by `id`, opens the RDMA device and
// connects the QPs. Every rank must use the same qpsPerPeer, slots and slotBytes (checked).
// `peers` (indexed by rank, empty: all) names the ranks to connect (BootstrapOptions::peers): no
// QP, memory or bootstrap socket is made for the others, and a message to one is refused.
Result<std::unique_ptr<Transport>> connectIbverbsTransport(const UniqueId& id, int rank, int nranks,
                                                           const IbverbsOptions& options, std::vector<bool> peers = {});

// The device, port and GID this process would use under `options` (the same choice as
// connectIbverbsTransport, with `localAddress` as the rank's IP, "" for none), and the port's rate
// (speed x width, for efficiency reports; 0 when the device does not say, as soft-RoCE).
struct IbverbsPortInfo {
  std::string device;
  int port = 0;
  int gidIndex = -1;
  std::string gid;
  int mtu = 0;
  double rateGbps = 0;
};
Result<IbverbsPortInfo> queryIbverbsPort(const IbverbsOptions& options, const std::string& localAddress = "");

// Names of the RDMA devices present ("" when none or libibverbs cannot be loaded): for tests and
// tools that skip or choose a transport.
std::string listIbverbsDevices();

}  // namespace nshim
