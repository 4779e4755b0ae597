// The shared-memory transport: ranks of one communicator that run on the same host move their
// messages through shared-memory rings (shm_ring.h), one per ordered pair, never through a NIC or
// the kernel's network stack. The stand-in for NVLink between the GPUs of a node: NCCL keeps
// intra-node traffic off the fabric, and so does a replay that routes those hops here
// (node_routed_transport.h). Same matching rule as every transport (the k-th send of a pair meets
// the k-th receive, same tag and length). Progress is driven by the waiting thread (busy-poll, then
// short sleeps); a peer whose process died, or that aborted, fails the wait naming it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/core/transport.h"

namespace nshim {

struct ShmOptions {
  size_t ringBytes = 256 << 10;  // NCCLSHIM_SHM_RING_BYTES: each ordered pair's ring (a power of two)
  double timeoutSeconds = 300;   // connection set-up
  int spinMicroseconds = 100;    // NCCLSHIM_SPIN_US: busy-poll before sleeping
  static ShmOptions fromEnvironment();
};

// Rank `rank` of `nranks`, connected to the ranks r with local[r] (on this host; local[rank] is
// true). Every local rank must call it with the same `id` (the communicator's unique id names the
// segments) and the same `local`; a send or receive to a rank that is not local is refused.
Result<std::unique_ptr<Transport>> connectShmTransport(const UniqueId& id, int rank, int nranks,
                                                       const std::vector<bool>& local, const ShmOptions& options);

}  // namespace nshim
