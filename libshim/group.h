// NCCL group semantics, GPU-free. Outside a group an operation runs to completion before its call
// returns. Between ncclGroupStart and the outermost ncclGroupEnd (nestable, per thread, like NCCL)
// operations are queued; at the end each communicator's queue runs in issue order, consecutive
// point-to-point operations as one batch (all posted before any is waited for, so grouped send/recv
// never deadlock), and the queues of different communicators run concurrently.
#pragma once

#include <functional>
#include <optional>

#include "collectives/collectives.h"
#include "common/status.h"
#include "libshim/shim_comm.h"

namespace nshim {

struct CommTask {
  ShimComm* comm = nullptr;              // live when submitted; queued, found again by `handle`
  const void* handle = nullptr;          // comm's, set by submit
  const char* fn = "";                   // the API function, for messages
  std::optional<P2POp> p2p;              // a send or receive, batched with its neighbours
  std::function<Status(ShimComm&)> run;  // anything else (collective, deferred init, split)
  bool needsConnected = true;            // false only for the deferred connection of an init
};

void groupStart();
// Ends one nesting level; the outermost runs the queued work and returns the first error. A call
// that failed inside the group makes the end fail too (with that error) and drops the queued work.
Status groupEnd();
bool inGroup();

// Runs `task` now (outside a group) or queues it for the outermost groupEnd.
Status submit(CommTask task);
// Remembers an error of a call made inside the group (see groupEnd).
void noteGroupError(const Status& status);

}  // namespace nshim
