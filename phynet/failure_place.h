// Where a failed replay's ranks sit on the fabric: the global ranks a failure message names (the
// executors write "(global rank N)" after each communicator rank), with their hosts and NICs and the
// host pair between this rank and the peer it waited for. A link that goes down past --timeout then
// ends the run naming the hosts and the NICs at both ends, not only rank numbers.
#pragma once

#include <string>
#include <vector>

#include "phynet/rank_endpoint.h"

namespace nshim::phynet {

// "; on the fabric: global rank 0 on host A NIC r0 (10.0.0.1), global rank 1 on host B NIC r0
// (10.0.0.2): host pair A - B"; "" when the message names no other rank or the endpoints are unknown.
std::string fabricPlaceOfFailure(const std::string& message, int self, const std::vector<RankEndpoint>& endpoints);

}  // namespace nshim::phynet
