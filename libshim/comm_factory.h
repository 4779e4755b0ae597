// Creating the engine side of a communicator: connecting over TCP through a unique id, or the
// in-process fabric of ncclCommInitAll; and the communicator ids that name a communicator
// consistently on all its members (for logs and, later, the recorder).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "transport/unique_id.h"

namespace nshim {

// Connects rank `rank` of `nranks` through the bootstrap root named by `id` (blocks until every rank
// has connected or the connection deadline passes).
Result<std::unique_ptr<Communicator>> connectCommunicator(const UniqueId& id, int rank, int nranks);
// Wraps a transport (in-process) into an engine communicator with the environment's options.
std::unique_ptr<Communicator> makeCommunicator(std::unique_ptr<Transport> transport);

// The id of a communicator created from `id` (equal on all members).
uint64_t commIdFromUniqueId(const UniqueId& id);
// The id of a communicator split from `parentId` (equal on all members of the new communicator).
uint64_t commIdFromSplit(uint64_t parentId, int color, uint64_t splitSeq);
// A fresh random id (ncclCommInitAll).
uint64_t randomCommId();

}  // namespace nshim
