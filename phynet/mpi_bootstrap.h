// Connects the transports of every communicator of a workload. For each communicator in id order,
// its lowest global rank creates a UniqueId (the TCP bootstrap root runs in that process) and
// broadcasts it over MPI (every rank takes part in every broadcast, in the same order, so nothing
// can cross); the members then connect. A failure is carried through the remaining broadcasts
// instead of abandoning them, and the ranks agree on the outcome at the end.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "phynet/mpi_session.h"
#include "phynet/workload_names.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport_factory.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct TransportChoice {
  std::string name = "tcp";  // tcp | ibverbs
  TcpOptions tcp;
  IbverbsOptions ibverbs;
  SocketInterface interface;  // this rank's socket interface: bootstrap roots listen on it
  CollectiveOptions collectives;
  bool verbose = false;
  // --intra-node shm: peers on this rank's node go over shared memory, the others over `name`.
  bool intraNodeShm = false;
  bool severalHosts = false;    // the ranks span more than one host (placeRanks)
  std::vector<int> nodeOfRank;  // per global rank (node_map.h): the communicators' node layouts
  ShmOptions shm;
};

struct BootstrapOutcome {
  std::map<uint64_t, std::unique_ptr<Communicator>> comms;  // this rank's, by communicator id
  Status status;                                            // the failure, if any rank failed
  bool localFailure = false;  // this rank's own failure (print it); else another rank's (it prints)
};

// Connects the communicators of `usedIds` (those that carry at least one op on some rank, ascending:
// RankValidation::usedComms, the same on every rank), in that order; collective over every rank.
BootstrapOutcome bootstrapCommunicators(const Workload& workload, const std::vector<uint64_t>& usedIds, MpiSession& mpi,
                                        const TransportChoice& choice);

}  // namespace nshim::phynet
