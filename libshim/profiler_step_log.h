// NCCL's network proxy steps, timed (a diagnostic of the profiler plugin, profiler_plugin.cc):
// with NCCLSHIM_PROFILER_STEPS=DIR, every step of every network proxy operation keeps the times of
// NCCL's step states, and the process writes them to DIR/ncclshim-steps-<pid>.csv (created new,
// 0600) when its last recording communicator is finalized. tests/gpu/wire_part.py joins the two
// ends of each step across ranks (the n-th step sent on a connection is the n-th received) and
// splits NCCL's time of each op into the part the wire decides (bytes between an isend's post and
// their arrival at the receiving proxy) and the rest (kernel launch, the GPU's copies into and out
// of the proxy's buffers, flags polled across PCIe): docs/time_truth.md.
// A send step's times: started (slot handed to the GPU), the GPU's wait, data ready (isend tried),
// isend posted, done. A receive step's: started, irecv posted, arrived, handed to the GPU, consumed.
// Off (the default) it costs one predictable branch per step event.
#pragma once

#include <cstdint>

namespace nshim::profiler {

// What a step log entry knows of its proxy operation (copied from it at the step's start).
struct StepOwner {
  uint64_t ncclCommHash = 0;
  uint64_t commId = 0;  // the shim's communicator of the joined call (0: not joined)
  uint64_t seq = 0;     // the joined call's sequence number
  int32_t rank = -1;
  int32_t peer = -1;
  int32_t channel = -1;
  bool isSend = false;
  uint64_t proxyTicket = 0;  // the operation's slot in the plugin's proxy pool
};

// Whether NCCLSHIM_PROFILER_STEPS names a folder (read once, at the first recording communicator).
bool stepLogOn();
void stepLogSetUp();

// A new entry for step `step` of an operation; returns its ticket, or UINT64_MAX when the log is full
// (counted, and said in the file).
uint64_t stepLogStart(const StepOwner& owner, int step, uint64_t nowNs);
// The operation an entry belongs to (for the plugin's byte sums); false for an unknown ticket.
bool stepLogOwnerTicket(uint64_t ticket, uint64_t* proxyTicket);
// NCCL's state `state` (nccl_profiler_abi.h) reached; the first time of each state is kept.
void stepLogState(uint64_t ticket, int state, uint64_t bytes, uint64_t nowNs);
void stepLogStop(uint64_t ticket, uint64_t nowNs);

// A recording communicator was set up / finalized; the last finalize writes the file.
void stepLogCommOpened();
void stepLogCommClosed();

}  // namespace nshim::profiler
