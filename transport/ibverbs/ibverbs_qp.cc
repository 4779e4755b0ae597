// RC queue pair creation and state changes (see ibverbs_qp.h). The masks are the ones rc_pingpong
// and perftest use: INIT {state, pkey index, port, access flags}; RTR {state, address vector, path
// MTU, destination QPN, receive PSN, max destination RDMA reads, min RNR timer}; RTS {state,
// timeout, retry count, RNR retry, send PSN, max RDMA reads}.
#include "transport/ibverbs/ibverbs_qp.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nshim {
namespace {

template <typename T>
void put(uint8_t*& out, T value) {
  if constexpr (sizeof(T) == 8) value = htole64(value);
  if constexpr (sizeof(T) == 4) value = htole32(value);
  if constexpr (sizeof(T) == 2) value = htole16(value);
  std::memcpy(out, &value, sizeof(T));
  out += sizeof(T);
}

template <typename T>
T take(const uint8_t*& in) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  in += sizeof(T);
  if constexpr (sizeof(T) == 8) value = le64toh(value);
  if constexpr (sizeof(T) == 4) value = le32toh(value);
  if constexpr (sizeof(T) == 2) value = le16toh(value);
  return value;
}

std::string errnoString(int rc) { return std::strerror(rc > 0 ? rc : errno); }

}  // namespace

void QpEndpoint::encode(uint8_t* out) const {
  put(out, qpn);
  put(out, psn);
  put(out, lid);
  put(out, mtu);
  std::memcpy(out, gid, 16);
  out += 16;
  put(out, ringAddress);
  put(out, ringKey);
}

QpEndpoint QpEndpoint::decode(const uint8_t* in) {
  QpEndpoint e;
  e.qpn = take<uint32_t>(in);
  e.psn = take<uint32_t>(in);
  e.lid = take<uint16_t>(in);
  e.mtu = take<uint8_t>(in);
  std::memcpy(e.gid, in, 16);
  in += 16;
  e.ringAddress = take<uint64_t>(in);
  e.ringKey = take<uint32_t>(in);
  return e;
}

Result<QpPtr> createRcQp(const VerbsApi& api, ibv_pd* pd, ibv_cq* cq, const OpenDevice& device, QpShape shape,
                         uint32_t* grantedInline) {
  const uint32_t maxWr = static_cast<uint32_t>(std::max(device.deviceAttr.max_qp_wr, 1));
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;  // selective signaling
  init.cap.max_send_wr = std::min(shape.sendDepth, maxWr);
  init.cap.max_recv_wr = std::min(shape.recvDepth, maxWr);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = shape.maxInline;
  QpPtr qp(api.createQp(pd, &init));
  if (!qp && shape.maxInline > 0) {  // some devices refuse inline data: retry without
    init.cap.max_inline_data = 0;
    qp.reset(api.createQp(pd, &init));
  }
  if (!qp) {
    return NS_ERROR(Code::kSystemError, "ibv_create_qp on {} failed ({} send / {} receive work requests): {}",
                    device.name, init.cap.max_send_wr, init.cap.max_recv_wr, errnoString(errno));
  }
  *grantedInline = init.cap.max_inline_data;

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<uint8_t>(device.port);
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  int rc = api.modifyQp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) {
    return NS_ERROR(Code::kSystemError, "moving a QP of {} to INIT failed: {}", device.name, errnoString(rc));
  }
  return qp;
}

Status connectRcQp(const VerbsApi& api, ibv_qp* qp, const OpenDevice& device, const QpEndpoint& local,
                   const QpEndpoint& remote, const QpPathOptions& path, const std::string& peerName) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu));
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = static_cast<uint8_t>(device.port);
  attr.ah_attr.sl = static_cast<uint8_t>(path.serviceLevel);
  attr.ah_attr.dlid = remote.lid;
  if (device.gidIndex >= 0) {  // RoCE (and routed IB): a GRH on every packet
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(device.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(path.trafficClass);
  }
  int rc = api.modifyQp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0) {
    return NS_ERROR(Code::kSystemError,
                    "moving QP {:#x} to RTR towards {} (QP {:#x}, GID {}, GID index {}) failed on {}: {}", local.qpn,
                    peerName, remote.qpn, gidText(remote.gid), device.gidIndex, device.name, errnoString(rc));
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(path.timeout);
  attr.retry_cnt = static_cast<uint8_t>(path.retryCount);
  attr.rnr_retry = static_cast<uint8_t>(path.rnrRetry);
  attr.sq_psn = local.psn;
  attr.max_rd_atomic = 1;
  rc = api.modifyQp(
      qp, &attr,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0) {
    return NS_ERROR(Code::kSystemError, "moving QP {:#x} to RTS towards {} failed on {}: {}", local.qpn, peerName,
                    device.name, errnoString(rc));
  }
  return Status::Ok();
}

void moveQpToError(const VerbsApi& api, ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  (void)api.modifyQp(qp, &attr, IBV_QP_STATE);
}

}  // namespace nshim
