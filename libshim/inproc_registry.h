// Rendezvous for in-process communicators created by ncclCommSplit of an in-process parent (ranks as
// threads, from ncclCommInitAll): the new communicator's first rank publishes the transports of all
// its ranks under a random key, which reaches the other members over the parent; each claims its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "transport/core/transport.h"

namespace nshim {

// Publishes transports[r] for rank r; returns the key.
uint64_t publishInProcessTransports(std::vector<std::unique_ptr<Transport>> transports);
// Takes rank's transport; the entry is dropped once every rank has claimed its own.
Result<std::unique_ptr<Transport>> claimInProcessTransport(uint64_t key, int rank);

}  // namespace nshim
