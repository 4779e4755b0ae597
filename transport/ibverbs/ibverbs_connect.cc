// Setting up the ibverbs transport of one rank: load libibverbs, bootstrap (one TCP socket per
// peer), open the device, then PD, ring memory and its MR, completion channel, CQ and QPs (two per
// link, outbound and inbound, with their receive queues filled), exchange QP endpoints with every
// peer over its socket, connect our outbound QP to the peer's inbound one and the other way round,
// move the QPs to RTS, and meet every peer once more so that nobody writes to a QP that is not ready.
#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "common/host_identity.h"
#include "common/log.h"
#include "common/nccl_env.h"
#include "common/settings.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/nic_list.h"
#include "transport/ibverbs/ibverbs_connection.h"
#include "transport/ibverbs/ibverbs_transport.h"

namespace nshim {
namespace {

using namespace ib;

constexpr uint32_t kSetupMagic = 0x4E535133;  // "NSQ3": two QPs per link, zero-copy offers
// magic, links per peer (| links per group << 16 | split data on QPs << 31), slots, slot bytes,
// zero-copy min (u32 each)
constexpr size_t kSetupHeaderBytes = 20;
constexpr uint32_t kSplitDataBit = 1u << 31;
constexpr uint32_t kSoftRoceVendorId = 0xFFFFFF;  // what rdma_rxe reports as its vendor_id

Status validate(const IbverbsOptions& o) {
  if (o.qpsPerPeer < 1 || o.qpsPerPeer > 64) {
    return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_QPS_PER_PEER={} out of range [1, 64]", o.qpsPerPeer);
  }
  if (o.qpsPerConnection < 1 || o.qpsPerPeer * o.qpsPerConnection > 64) {
    return NS_ERROR(Code::kInvalidArgument,
                    "NCCL_IB_QPS_PER_CONNECTION (or NCCLSHIM_IB_QPS_PER_CONNECTION) = {} with NCCLSHIM_IB_QPS_PER_PEER "
                    "= {}: {} links per peer, where at most 64 are supported",
                    o.qpsPerConnection, o.qpsPerPeer, o.qpsPerPeer * o.qpsPerConnection);
  }
  if (o.slots < 2 || o.slots > 4096) {
    return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_SLOTS={} out of range [2, 4096]", o.slots);
  }
  if (o.slotBytes < 64 || o.slotBytes > (64u << 20)) {
    return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_SLOT_BYTES={} out of range [64, 64M]", o.slotBytes);
  }
  if (o.zeroCopyMin > (1u << 30)) {
    return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_ZERO_COPY_MIN={} out of range [0 (off), 1G]", o.zeroCopyMin);
  }
  if (!(o.timeoutSeconds > 0))
    return NS_ERROR(Code::kInvalidArgument, "timeout {} s must be positive", o.timeoutSeconds);
  return Status::Ok();
}

RingShape shapeFor(const IbverbsOptions& o) {
  RingShape shape;
  shape.slots = static_cast<uint32_t>(o.slots);
  shape.fragmentBytes = static_cast<uint32_t>(o.slotBytes);
  shape.slotStride = static_cast<uint32_t>((o.slotBytes + kFragmentHeaderBytes + 63) / 64 * 64);
  shape.signalEvery = static_cast<uint32_t>(std::clamp(o.signalEvery, 1, o.slots));
  shape.zeroCopyMin = o.zeroCopyMin;
  shape.qpsPerConnection = static_cast<uint32_t>(o.qpsPerConnection);
  shape.splitDataOnQps = o.splitDataOnQps;
  // Data writes (fragments and zero-copy writes), credits and offers not yet known complete, and
  // as many arriving, not yet reposted.
  shape.sendDepth = 2 * shape.slots + 4 + shape.offersAhead;
  shape.recvDepth = 2 * shape.slots + 4 + shape.offersAhead;
  return shape;
}

// Registered memory of one link: the send and receive rings, then (for the outbound QP) a landing
// entry per receive WQE where offers arrive, and (for the inbound QP) a staging entry per send WQE
// for offers that cannot go inline.
size_t ringBytesOf(const RingShape& shape) { return static_cast<size_t>(shape.slots) * shape.slotStride; }
size_t linkBytesOf(const RingShape& shape) {
  return 2 * ringBytesOf(shape) + kControlSlotBytes * (shape.recvDepth + shape.sendDepth);
}

// One QP of connection `c` with its work request lists and its receive queue filled: receives of
// the outbound QP (credits and offers) each land in their own entry, the inbound QP's (data writes
// with immediate) need no buffer.
Status createLane(IbResources& r, Connection& c, bool inbound, const RingShape& shape) {
  QpLane& lane = c.lane(inbound);
  NS_ASSIGN_OR_RETURN(lane.qp, createRcQp(*r.api, r.pd.get(), r.cq.get(), r.device,
                                          QpShape{shape.sendDepth, shape.recvDepth, 128}, &lane.maxInline));
  lane.qpn = lane.qp->qp_num;
  lane.wrs.resize(shape.sendDepth);
  lane.sges.resize(shape.sendDepth);
  lane.recvWrs.resize(shape.recvDepth);
  lane.recvSges.resize(shape.recvDepth);
  for (size_t i = 0; i < lane.recvWrs.size(); ++i) {
    lane.recvWrs[i] = ibv_recv_wr{};
    lane.recvWrs[i].wr_id = makeWrId(c.id, inbound, i, true);
    lane.recvWrs[i].next = i + 1 < lane.recvWrs.size() ? &lane.recvWrs[i + 1] : nullptr;
    if (!inbound) {
      lane.recvSges[i] = ibv_sge{reinterpret_cast<uintptr_t>(lane.landing + i * kControlSlotBytes),
                                 static_cast<uint32_t>(kControlSlotBytes), r.mr->lkey};
      lane.recvWrs[i].sg_list = &lane.recvSges[i];
      lane.recvWrs[i].num_sge = 1;
    }
  }
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(lane.qp.get(), lane.recvWrs.data(), &bad);
  if (rc != 0) return NS_ERROR(Code::kSystemError, "ibv_post_recv on {} failed: {}", r.device.name, std::strerror(rc));
  return Status::Ok();
}

// PD, ring memory + MR, channel, CQ, and the QPs to every peer with their receives posted.
Status createResources(IbResources& r, int rank, int nranks, int qps, const RingShape& shape) {
  const VerbsApi& api = *r.api;
  const std::string& dev = r.device.name;
  r.pd.reset(api.allocPd(r.device.context.get()));
  if (!r.pd) return NS_ERROR(Code::kSystemError, "ibv_alloc_pd on {} failed: {}", dev, std::strerror(errno));
  const size_t links = static_cast<size_t>(r.connectedPeerCount()) * qps;
  const size_t ringBytes = ringBytesOf(shape);
  NS_ASSIGN_OR_RETURN(r.memory, PinnedBuffer::allocate(links * linkBytesOf(shape)));
  if (links > 0) {
    r.mr.reset(
        api.regMr(r.pd.get(), r.memory.data(), r.memory.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    if (!r.mr) {
      return NS_ERROR(Code::kSystemError,
                      "ibv_reg_mr of {} bytes on {} failed: {} (is the locked-memory limit, "
                      "ulimit -l, too low?)",
                      r.memory.size(), dev, std::strerror(errno));
    }
  }
  r.channel.reset(api.createCompChannel(r.device.context.get()));
  if (!r.channel)
    return NS_ERROR(Code::kSystemError, "ibv_create_comp_channel on {} failed: {}", dev, std::strerror(errno));
  int flags = ::fcntl(r.channel->fd, F_GETFL);
  if (flags < 0 || ::fcntl(r.channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return NS_ERROR(Code::kSystemError, "cannot make the completion channel non-blocking: {}", std::strerror(errno));
  }
  size_t wanted = std::max<size_t>(2 * links * (shape.sendDepth + shape.recvDepth), 16);
  int cqe = static_cast<int>(std::min<size_t>(wanted, static_cast<size_t>(std::max(r.device.deviceAttr.max_cqe, 16))));
  if (static_cast<size_t>(cqe) < wanted) {
    NS_WARN("ibverbs: {} allows {} CQ entries, fewer than the {} that {} connections may need", dev, cqe, wanted,
            links);
  }
  r.cq.reset(api.createCq(r.device.context.get(), cqe, nullptr, r.channel.get(), 0));
  if (!r.cq)
    return NS_ERROR(Code::kSystemError, "ibv_create_cq ({} entries) on {} failed: {}", cqe, dev, std::strerror(errno));

  r.connections.resize(static_cast<size_t>(nranks) * qps);
  size_t link = 0;
  for (int peer = 0; peer < nranks; ++peer) {
    for (int index = 0; index < qps; ++index) {
      Connection& c = r.connections[static_cast<size_t>(peer) * qps + index];
      c.id = static_cast<size_t>(peer) * qps + index;
      c.peer = peer;
      c.index = index;
      if (!r.peerSockets[peer].valid()) continue;  // itself, or a peer left out
      char* base = r.memory.data() + link * linkBytesOf(shape);
      c.txRing = base;
      c.rxRing = base + ringBytes;
      c.outbound.landing = base + 2 * ringBytes;
      c.inbound.staging = c.outbound.landing + kControlSlotBytes * shape.recvDepth;
      ++link;
      NS_RETURN_IF_ERROR(createLane(r, c, false, shape));
      NS_RETURN_IF_ERROR(createLane(r, c, true, shape));
    }
  }
  return Status::Ok();
}

// The setup header's word of links: every rank's must be the same.
uint32_t linksWord(int qps, const RingShape& shape) {
  return static_cast<uint32_t>(qps) | shape.qpsPerConnection << 16 | (shape.splitDataOnQps ? kSplitDataBit : 0);
}

std::vector<uint8_t> encodeSetup(const IbResources& r, int peer, int qps, const RingShape& shape, uint32_t psnSeed) {
  std::vector<uint8_t> out(kSetupHeaderBytes + 2 * qps * QpEndpoint::kWireBytes);
  uint32_t header[5] = {htole32(kSetupMagic), htole32(linksWord(qps, shape)), htole32(shape.slots),
                        htole32(shape.fragmentBytes), htole32(static_cast<uint32_t>(shape.zeroCopyMin))};
  std::memcpy(out.data(), header, sizeof(header));
  for (int index = 0; index < qps; ++index) {
    const Connection& c = r.connections[static_cast<size_t>(peer) * qps + index];
    for (int inbound = 0; inbound < 2; ++inbound) {
      const QpLane& lane = inbound ? c.inbound : c.outbound;
      QpEndpoint e;
      e.qpn = lane.qpn;
      e.psn = (psnSeed + lane.qpn * 7919u) & 0xffffff;
      e.lid = r.device.lid;
      e.mtu = static_cast<uint8_t>(r.device.activeMtu);
      std::memcpy(e.gid, r.device.gid.raw, 16);
      e.ringAddress = reinterpret_cast<uintptr_t>(c.rxRing);  // where the peer's outbound QP writes
      e.ringKey = r.mr->rkey;
      e.encode(out.data() + kSetupHeaderBytes + (2 * index + inbound) * QpEndpoint::kWireBytes);
    }
  }
  return out;
}

// Where endpoint `inbound` of link `index` lies in a setup message.
size_t endpointOffset(int index, bool inbound) {
  return kSetupHeaderBytes + (2 * static_cast<size_t>(index) + (inbound ? 1 : 0)) * QpEndpoint::kWireBytes;
}

// Sends our endpoints to every peer, reads theirs, and connects every QP.
Status exchangeAndConnect(IbResources& r, int rank, int nranks, int qps, const RingShape& shape,
                          const IbverbsOptions& o) {
  Deadline deadline = Deadline::after(o.timeoutSeconds);
  uint32_t psnSeed = std::random_device{}();
  std::vector<std::vector<uint8_t>> mine(nranks);
  for (int peer = 0; peer < nranks; ++peer) {
    if (!r.peerSockets[peer].valid()) continue;
    mine[peer] = encodeSetup(r, peer, qps, shape, psnSeed);
    NS_RETURN_IF_ERROR(writeAll(r.peerSockets[peer].get(), mine[peer].data(), mine[peer].size(), deadline,
                                fmt::format("rank {} (ibverbs setup)", peer)));
  }
  QpPathOptions path{o.trafficClass, o.serviceLevel, o.ibTimeout, o.retryCount, 7};
  for (int peer = 0; peer < nranks; ++peer) {
    if (!r.peerSockets[peer].valid()) continue;
    std::vector<uint8_t> theirs(kSetupHeaderBytes);
    std::string what = fmt::format("rank {} (ibverbs setup)", peer);
    Status read = readAll(r.peerSockets[peer].get(), theirs.data(), theirs.size(), deadline, what);
    if (!read.ok()) {
      return NS_ERROR(read.code(),
                      "rank {} did not get the QP endpoints of rank {}: {} (rank {} may have failed to "
                      "set up its RDMA device: see its own error)",
                      rank, peer, read.message(), peer);
    }
    uint32_t header[5];
    std::memcpy(header, theirs.data(), sizeof(header));
    for (uint32_t& word : header) word = le32toh(word);
    if (header[0] != kSetupMagic) {
      return NS_ERROR(Code::kRemoteError, "rank {} sent a malformed ibverbs setup (another ncclshim version?)", peer);
    }
    if (header[1] != linksWord(qps, shape) || header[2] != shape.slots || header[3] != shape.fragmentBytes ||
        header[4] != shape.zeroCopyMin) {
      return NS_ERROR(Code::kInvalidUsage,
                      "rank {} uses {} links per peer in groups of {} (split data on QPs {}), {} slots of {} bytes "
                      "and zero copy from {} bytes, but rank {} uses {} in groups of {} ({}), {}, {} and {}: set "
                      "NCCLSHIM_IB_QPS_PER_PEER, NCCL_IB_QPS_PER_CONNECTION, NCCL_IB_SPLIT_DATA_ON_QPS, "
                      "NCCLSHIM_IB_SLOTS, NCCLSHIM_IB_SLOT_BYTES and NCCLSHIM_IB_ZERO_COPY_MIN alike on every rank",
                      peer, header[1] & 0xffff, (header[1] & ~kSplitDataBit) >> 16,
                      (header[1] & kSplitDataBit) != 0 ? 1 : 0, header[2], header[3], header[4], rank, qps,
                      shape.qpsPerConnection, shape.splitDataOnQps ? 1 : 0, shape.slots, shape.fragmentBytes,
                      shape.zeroCopyMin);
    }
    theirs.resize(endpointOffset(qps, false));  // the header and every link's two endpoints
    NS_RETURN_IF_ERROR(readAll(r.peerSockets[peer].get(), theirs.data() + kSetupHeaderBytes,
                               theirs.size() - kSetupHeaderBytes, deadline, what));
    for (int index = 0; index < qps; ++index) {
      Connection& c = r.connections[static_cast<size_t>(peer) * qps + index];
      // Our outbound QP talks to the peer's inbound one, and the other way round.
      for (int inbound = 0; inbound < 2; ++inbound) {
        QpEndpoint local = QpEndpoint::decode(mine[peer].data() + endpointOffset(index, inbound));
        QpEndpoint remote = QpEndpoint::decode(theirs.data() + endpointOffset(index, !inbound));
        if (!inbound) {
          c.remoteRing = remote.ringAddress;
          c.remoteKey = remote.ringKey;
        }
        NS_RETURN_IF_ERROR(
            connectRcQp(*r.api, c.lane(inbound).qp.get(), r.device, local, remote, path, fmt::format("rank {}", peer)));
      }
    }
  }
  // Everyone's QPs are at RTS before anyone writes.
  const char ready = 'R';
  for (int peer = 0; peer < nranks; ++peer) {
    if (r.peerSockets[peer].valid()) {
      NS_RETURN_IF_ERROR(writeAll(r.peerSockets[peer].get(), &ready, 1, deadline, fmt::format("rank {}", peer)));
    }
  }
  for (int peer = 0; peer < nranks; ++peer) {
    if (!r.peerSockets[peer].valid()) continue;
    char answer = 0;
    NS_RETURN_IF_ERROR(
        readAll(r.peerSockets[peer].get(), &answer, 1, deadline, fmt::format("rank {} (ibverbs setup)", peer)));
  }
  return Status::Ok();
}

}  // namespace

IbverbsOptions IbverbsOptions::fromEnvironment() {
  IbverbsOptions o;
  o.hca = nicForLocalRank(settingString(Setting::NCCLSHIM_IB_HCA), localRankFromEnvironment());
  o.gidIndex = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_GID_INDEX));                   // -1: auto
  o.trafficClass = static_cast<int>(settingOrNcclInt(Setting::NCCLSHIM_IB_TC, "NCCL_IB_TC"));  // a capture's too
  o.serviceLevel = static_cast<int>(settingOrNcclInt(Setting::NCCLSHIM_IB_SL, "NCCL_IB_SL"));
  o.qpsPerPeer = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_QPS_PER_PEER));
  o.qpsPerConnection =  // a capture's too
      static_cast<int>(settingOrNcclInt(Setting::NCCLSHIM_IB_QPS_PER_CONNECTION, "NCCL_IB_QPS_PER_CONNECTION"));
  o.splitDataOnQps =
      settingOrNcclInt(Setting::NCCLSHIM_IB_SPLIT_DATA_ON_QPS, "NCCL_IB_SPLIT_DATA_ON_QPS") != 0;  // a capture's too
  o.slots = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_SLOTS));
  o.slotBytes = static_cast<size_t>(settingInt(Setting::NCCLSHIM_IB_SLOT_BYTES));
  o.signalEvery = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_SIGNAL_EVERY));
  o.zeroCopyMin = static_cast<size_t>(settingInt(Setting::NCCLSHIM_IB_ZERO_COPY_MIN));
  o.ibTimeout = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_TIMEOUT));
  o.retryCount = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_RETRY_CNT));
  o.timeoutSeconds = settingDouble(Setting::NCCLSHIM_TIMEOUT);
  o.spinMicroseconds = static_cast<int>(settingInt(Setting::NCCLSHIM_SPIN_US));
  o.postThread = static_cast<int>(settingInt(Setting::NCCLSHIM_IB_POST_THREAD));  // -1: auto
  return o;
}

std::string listIbverbsDevices() {
  auto api = loadVerbs();
  if (!api.ok()) return "";
  int count = 0;
  DeviceListPtr list((*api)->getDeviceList(&count));
  std::string names;
  for (int i = 0; list && i < count; ++i)
    names += std::string(names.empty() ? "" : ",") + (*api)->getDeviceName(list.get()[i]);
  return names;
}

Result<IbverbsPortInfo> queryIbverbsPort(const IbverbsOptions& options, const std::string& localAddress) {
  NS_ASSIGN_OR_RETURN(const VerbsApi* api, loadVerbs());
  DeviceRequest request{options.hca, options.gidIndex, {}};
  if (!localAddress.empty()) {
    NS_ASSIGN_OR_RETURN(SocketAddress address, SocketAddress::parse(localAddress, 0));
    request.preferredGid = addressAsGid(address.sockaddrPtr());
  }
  NS_ASSIGN_OR_RETURN(OpenDevice device, openIbverbsDevice(*api, request));
  IbverbsPortInfo info;
  info.device = device.name;
  info.port = device.port;
  info.gidIndex = device.gidIndex;
  info.gid = gidText(device.gid.raw);
  info.mtu = 128 << device.activeMtu;
  info.rateGbps = portRateGbps(device.portAttr);
  return info;
}

Result<std::unique_ptr<Transport>> connectIbverbsTransport(const UniqueId& id, int rank, int nranks,
                                                           const IbverbsOptions& options, std::vector<bool> peers) {
  NS_RETURN_IF_ERROR(validate(options));
  NS_ASSIGN_OR_RETURN(const VerbsApi* api, loadVerbs());
  NS_ASSIGN_OR_RETURN(
      PeerSockets sockets,
      bootstrapConnect(id, rank, nranks, {1, options.timeoutSeconds, options.bootstrapInterface, std::move(peers)}));
  auto res = std::make_unique<IbResources>();
  res->api = api;
  res->peerSockets.resize(nranks);
  int anyPeer = -1;  // a connected peer
  for (int peer = 0; peer < nranks; ++peer) {
    if (sockets.sockets[peer].empty()) continue;  // itself, or a peer left out
    res->peerSockets[peer] = std::move(sockets.sockets[peer][0]);
    if (anyPeer < 0) anyPeer = peer;
  }
  // The rank's own address (that of its bootstrap connections) picks the device whose GID holds it.
  DeviceRequest request{options.hca, options.gidIndex, {}};
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (anyPeer >= 0 &&
      ::getsockname(res->peerSockets[anyPeer].get(), reinterpret_cast<sockaddr*>(&local), &length) == 0) {
    request.preferredGid = addressAsGid(reinterpret_cast<sockaddr*>(&local));
  }
  auto device = openIbverbsDevice(*api, request);
  if (!device.ok()) return NS_ERROR(device.status().code(), "rank {}: {}", rank, device.status().message());
  res->device = std::move(device).value();
  const RingShape shape = shapeFor(options);
  const int links = options.qpsPerPeer * options.qpsPerConnection;  // per peer: groups x QPs per connection
  NS_RETURN_IF_ERROR(createResources(*res, rank, nranks, links, shape));
  NS_RETURN_IF_ERROR(exchangeAndConnect(*res, rank, nranks, links, shape, options));
  const bool postThread =
      options.postThread < 0 ? res->device.deviceAttr.vendor_id == kSoftRoceVendorId : options.postThread == 1;
  uint32_t inlineBytes = anyPeer >= 0 ? res->connections[static_cast<size_t>(anyPeer) * links].outbound.maxInline : 0;
  NS_INFO(
      "rank {} of {}: ibverbs transport on {} port {} (GID index {}), {} link(s) per peer (2 QPs each; {} per "
      "channel group{}), {} slots of {} B, inline up to {} B, writes posted {}",
      rank, nranks, res->device.name, res->device.port, res->device.gidIndex, links, options.qpsPerConnection,
      shape.splitDataOnQps && options.qpsPerConnection > 1 ? ", every message cut over them" : "", shape.slots,
      shape.fragmentBytes, inlineBytes, postThread ? "by a thread" : "inline");
  return makeIbverbsTransport(std::move(res), rank, nranks, links, shape, options.spinMicroseconds, postThread);
}

}  // namespace nshim
