// Creating the engine side of a communicator: connecting over TCP through a unique id, or the
// in-process fabric of ncclCommInitAll.
#pragma once

#include <memory>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "transport/bootstrap/unique_id.h"

namespace nshim {

// Connects rank `rank` of `nranks` through the bootstrap root named by `id` (blocks until every rank
// has connected or the connection deadline passes).
Result<std::unique_ptr<Communicator>> connectCommunicator(const UniqueId& id, int rank, int nranks);
// Wraps a transport (in-process) into an engine communicator with the environment's options.
std::unique_ptr<Communicator> makeCommunicator(std::unique_ptr<Transport> transport);

}  // namespace nshim
