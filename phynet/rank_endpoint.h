// Where each rank of a replay sits on the fabric: its host (host_identity.h), its rank on that host,
// and its NIC (the socket interface for TCP; the RDMA device, port and GID for ibverbs), chosen
// from the per-local-rank NIC lists (nic_list.h). Encoded as one line so that MPI can gather it.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "transport/transport_factory.h"

namespace nshim::phynet {

struct RankEndpoint {
  std::string hostId;    // hostIdentity(): equal exactly for ranks of one host
  std::string hostName;  // hostname
  int localRank = -1;
  std::string nic;      // interface (tcp) or RDMA device (ibverbs)
  std::string address;  // the rank's IP address (its socket interface)
  int port = 0;         // ibverbs: device port
  std::string gid;      // ibverbs: the GID its QPs use
};

// The launcher's local rank when it gives one (>= 0), else this rank's position among the ranks
// whose host identity equals its own.
int localRankOf(const std::vector<std::string>& hostIds, int self, int launcherLocalRank);

// This rank's endpoint under the chosen transport; an error names the host (by `hostLabel`) and the
// NIC entry that does not exist there.
Result<RankEndpoint> resolveEndpoint(TransportKind kind, const SocketInterface& interface,
                                     const IbverbsOptions& ibverbs, const std::string& hostId,
                                     const std::string& hostLabel, int localRank);

std::string encodeEndpoint(const RankEndpoint& endpoint);
Result<RankEndpoint> decodeEndpoint(const std::string& line);

// A readable name per rank's host: NCCLSHIM_HOSTID when it was given, else the hostname, with
// "#k" added when hosts of one hostname have different identities (namespaces, VMs).
std::vector<std::string> hostLabels(const std::vector<std::string>& hostIds);
std::vector<std::string> hostLabels(const std::vector<RankEndpoint>& endpoints);

// "host h2, local rank 1, NIC r1 10.100.2.1" (+ port and GID over ibverbs).
std::string describeEndpoint(const RankEndpoint& endpoint, const std::string& hostLabel);

}  // namespace nshim::phynet
