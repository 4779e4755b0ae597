// RDMA writes over one RC QP (ibverbs_write_stream.h): the resources in creation order (so they are
// destroyed in reverse), the endpoint record of ibverbs_qp.h, and a send queue that is signaled every
// kSignalEvery writes, with at most kDepth - 1 in flight.
#include "transport/ibverbs/ibverbs_write_stream.h"

#include <cstring>
#include <random>
#include <thread>

#include "transport/bootstrap/socket.h"
#include "transport/ibverbs/ibverbs_device.h"
#include "transport/ibverbs/ibverbs_qp.h"
#include "transport/ibverbs/ibverbs_resources.h"

namespace nshim {
namespace {

constexpr uint32_t kDepth = 64;
constexpr uint64_t kSignalEvery = 8;

}  // namespace

struct RdmaWriteStream::Impl {
  const VerbsApi* api = nullptr;
  OpenDevice device;
  PdPtr pd;
  PinnedBuffer memory;
  MrPtr mr;
  CqPtr cq;
  QpPtr qp;
  QpEndpoint local;
  uint64_t remoteAddress = 0;
  uint32_t remoteKey = 0;
  std::string peer;
  uint64_t posted = 0, retired = 0;  // writes posted; writes known complete
  uint64_t lastSignaled = 0;         // 1 + the sequence of the last signaled write (0: none)
  std::vector<uint32_t> sizes = std::vector<uint32_t>(kDepth);
  uint64_t bytesDone = 0;

  Status reap() {
    ibv_wc wcs[16];
    for (;;) {
      int n = ibv_poll_cq(cq.get(), 16, wcs);
      if (n < 0) return NS_ERROR(Code::kSystemError, "ibv_poll_cq failed on {} ({})", device.name, n);
      for (int i = 0; i < n; ++i) {
        if (wcs[i].status != IBV_WC_SUCCESS) {
          return NS_ERROR(Code::kRemoteError,
                          "an RDMA write on {} to {} completed with error: {} (status {}, vendor "
                          "error {:#x})",
                          device.name, peer, api->wcStatusStr(wcs[i].status), static_cast<int>(wcs[i].status),
                          wcs[i].vendor_err);
        }
        for (uint64_t done = wcs[i].wr_id + 1; retired < done; ++retired) bytesDone += sizes[retired % kDepth];
      }
      if (n < 16) return Status::Ok();
    }
  }

  Status post(size_t bytes, bool signaled) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(memory.data()), static_cast<uint32_t>(bytes), mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = posted;
    wr.sg_list = bytes ? &sge : nullptr;
    wr.num_sge = bytes ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = remoteAddress;
    wr.wr.rdma.rkey = remoteKey;
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qp.get(), &wr, &bad);
    if (rc != 0) {
      return NS_ERROR(Code::kSystemError, "ibv_post_send of an RDMA write on {} to {} failed: {}", device.name, peer,
                      std::strerror(rc));
    }
    sizes[posted % kDepth] = static_cast<uint32_t>(bytes);
    if (signaled) lastSignaled = posted + 1;
    ++posted;
    return Status::Ok();
  }

  // Reaps until fewer than `most` writes are in flight.
  Status waitBelow(uint64_t most, Deadline deadline, const char* what) {
    for (;;) {
      NS_RETURN_IF_ERROR(reap());
      if (posted - retired < most) return Status::Ok();
      if (deadline.expired()) {
        return NS_ERROR(Code::kTimeout, "{} RDMA writes on {} to {} not complete {} (is the peer or the link down?)",
                        posted - retired, device.name, peer, what);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
};

RdmaWriteStream::RdmaWriteStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RdmaWriteStream::~RdmaWriteStream() {
  if (impl_ && impl_->qp) moveQpToError(*impl_->api, impl_->qp.get());
}

Result<std::unique_ptr<RdmaWriteStream>> RdmaWriteStream::open(const std::string& localAddress, size_t bufferBytes) {
  auto s = std::make_unique<Impl>();
  NS_ASSIGN_OR_RETURN(s->api, loadVerbs());
  const VerbsApi& api = *s->api;
  NS_ASSIGN_OR_RETURN(SocketAddress address, SocketAddress::parse(localAddress, 0));
  DeviceRequest request;
  request.preferredGid = addressAsGid(address.sockaddrPtr());
  NS_ASSIGN_OR_RETURN(s->device, openIbverbsDevice(api, request));
  if (std::memcmp(s->device.gid.raw, request.preferredGid.data(), 16) != 0) {
    return NS_ERROR(Code::kInvalidArgument,
                    "no RDMA device has a RoCE v2 GID for {} (the first usable one, {}, has {})", localAddress,
                    s->device.name, gidText(s->device.gid.raw));
  }
  const std::string& dev = s->device.name;
  s->pd.reset(api.allocPd(s->device.context.get()));
  if (!s->pd) return NS_ERROR(Code::kSystemError, "ibv_alloc_pd on {} failed: {}", dev, std::strerror(errno));
  NS_ASSIGN_OR_RETURN(s->memory, PinnedBuffer::allocate(bufferBytes));
  s->mr.reset(
      api.regMr(s->pd.get(), s->memory.data(), s->memory.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!s->mr) {
    return NS_ERROR(Code::kSystemError, "ibv_reg_mr of {} bytes on {} failed: {} (ulimit -l too low?)", bufferBytes,
                    dev, std::strerror(errno));
  }
  s->cq.reset(api.createCq(s->device.context.get(), 2 * kDepth, nullptr, nullptr, 0));
  if (!s->cq) return NS_ERROR(Code::kSystemError, "ibv_create_cq on {} failed: {}", dev, std::strerror(errno));
  uint32_t inlineBytes = 0;
  NS_ASSIGN_OR_RETURN(s->qp, createRcQp(api, s->pd.get(), s->cq.get(), s->device, QpShape{kDepth, 1, 0}, &inlineBytes));
  s->local.qpn = s->qp->qp_num;
  s->local.psn = std::random_device{}() & 0xffffff;
  s->local.lid = s->device.lid;
  s->local.mtu = static_cast<uint8_t>(s->device.activeMtu);
  std::memcpy(s->local.gid, s->device.gid.raw, 16);
  s->local.ringAddress = reinterpret_cast<uintptr_t>(s->memory.data());
  s->local.ringKey = s->mr->rkey;
  return std::unique_ptr<RdmaWriteStream>(new RdmaWriteStream(std::move(s)));
}

const std::string& RdmaWriteStream::deviceName() const { return impl_->device.name; }

size_t RdmaWriteStream::endpointBytes() { return QpEndpoint::kWireBytes; }

std::vector<uint8_t> RdmaWriteStream::endpoint() const {
  std::vector<uint8_t> out(QpEndpoint::kWireBytes);
  impl_->local.encode(out.data());
  return out;
}

Status RdmaWriteStream::connect(const std::vector<uint8_t>& remote, const std::string& peerName) {
  if (remote.size() != QpEndpoint::kWireBytes) {
    return NS_ERROR(Code::kRemoteError, "{} sent a QP record of {} bytes, not {}", peerName, remote.size(),
                    QpEndpoint::kWireBytes);
  }
  QpEndpoint theirs = QpEndpoint::decode(remote.data());
  impl_->remoteAddress = theirs.ringAddress;
  impl_->remoteKey = theirs.ringKey;
  impl_->peer = peerName;
  return connectRcQp(*impl_->api, impl_->qp.get(), impl_->device, impl_->local, theirs, QpPathOptions{}, peerName);
}

Status RdmaWriteStream::write(size_t bytes, Deadline deadline) {
  if (bytes > impl_->memory.size()) {
    return NS_ERROR(Code::kInvalidArgument, "an RDMA write of {} bytes exceeds the {}-byte buffer", bytes,
                    impl_->memory.size());
  }
  NS_RETURN_IF_ERROR(impl_->waitBelow(kDepth - 1, deadline, "in time for the next one"));
  return impl_->post(bytes, (impl_->posted + 1) % kSignalEvery == 0);
}

Status RdmaWriteStream::poll() { return impl_->reap(); }

Status RdmaWriteStream::drain(Deadline deadline) {
  if (impl_->posted > impl_->lastSignaled) {  // the tail is unsignaled: a signaled empty write retires it
    NS_RETURN_IF_ERROR(impl_->waitBelow(kDepth - 1, deadline, "before the last one"));
    NS_RETURN_IF_ERROR(impl_->post(0, true));
  }
  return impl_->waitBelow(1, deadline, "at the end");
}

uint64_t RdmaWriteStream::bytesCompleted() const { return impl_->bytesDone; }

}  // namespace nshim
