// One place that turns a transport name into a connected transport, for the shim
// (NCCLSHIM_TRANSPORT) and phynet (--transport): "tcp" (the default, any host), "ibverbs"
// (RoCEv2 over an RDMA NIC; libibverbs is loaded only then) or "shm" (every rank on this host,
// shared memory only: the shim's local runs and benchmarks; phynet routes by node instead,
// --intra-node shm).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/core/transport.h"
#include "transport/ibverbs/ibverbs_transport.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {

enum class TransportKind { kTcp, kIbverbs, kShm };

Result<TransportKind> transportKindFromName(const std::string& name);
// NCCLSHIM_TRANSPORT (tcp|ibverbs|shm), default tcp.
Result<TransportKind> transportKindFromEnvironment();
const char* transportKindName(TransportKind kind);

// Bootstraps and connects rank `rank` of `nranks` with the given options of that transport, to the
// ranks of `peers` (indexed by rank; empty: all of them). Every rank passes the same relation.
Result<std::unique_ptr<Transport>> connectTransport(TransportKind kind, const UniqueId& id, int rank, int nranks,
                                                    const TcpOptions& tcp, const IbverbsOptions& ibverbs,
                                                    std::vector<bool> peers = {});
// The same with both transports' options taken from the environment.
Result<std::unique_ptr<Transport>> connectTransport(TransportKind kind, const UniqueId& id, int rank, int nranks);

}  // namespace nshim
