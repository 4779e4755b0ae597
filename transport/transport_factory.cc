// Transport selection by name (transport_factory.h).
#include "transport/transport_factory.h"

#include "common/settings.h"
#include "transport/shm/shm_transport.h"

namespace nshim {

Result<TransportKind> transportKindFromName(const std::string& name) {
  if (name == "tcp" || name == "TCP" || name == "socket") return TransportKind::kTcp;
  if (name == "ibverbs" || name == "IB" || name == "ib" || name == "roce") return TransportKind::kIbverbs;
  if (name == "shm") return TransportKind::kShm;
  return NS_ERROR(Code::kInvalidArgument, "unknown transport '{}' (use tcp, ibverbs or shm)", name);
}

Result<TransportKind> transportKindFromEnvironment() {
  Result<TransportKind> kind = transportKindFromName(settingString(Setting::NCCLSHIM_TRANSPORT));
  if (!kind.ok()) return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_TRANSPORT: {}", kind.status().message());
  return kind;
}

const char* transportKindName(TransportKind kind) {
  return kind == TransportKind::kIbverbs ? "ibverbs" : kind == TransportKind::kShm ? "shm" : "tcp";
}

Result<std::unique_ptr<Transport>> connectTransport(TransportKind kind, const UniqueId& id, int rank, int nranks,
                                                    const TcpOptions& tcp, const IbverbsOptions& ibverbs,
                                                    std::vector<bool> peers) {
  if (kind == TransportKind::kIbverbs) return connectIbverbsTransport(id, rank, nranks, ibverbs, std::move(peers));
  if (kind == TransportKind::kShm) {
    ShmOptions shm = ShmOptions::fromEnvironment();
    shm.timeoutSeconds = tcp.timeoutSeconds;
    if (peers.empty()) peers.assign(static_cast<size_t>(nranks), true);
    if (rank >= 0 && rank < static_cast<int>(peers.size())) peers[rank] = true;
    return connectShmTransport(id, rank, nranks, peers, shm);
  }
  return connectTcpTransport(id, rank, nranks, tcp, std::move(peers));
}

Result<std::unique_ptr<Transport>> connectTransport(TransportKind kind, const UniqueId& id, int rank, int nranks) {
  return connectTransport(kind, id, rank, nranks, TcpOptions::fromEnvironment(), IbverbsOptions::fromEnvironment());
}

}  // namespace nshim
