// Per-communicator state for the record hook, kept beside the communicator instead of inside it:
// forward mode hands the real NCCL's ncclComm_t to the program unchanged (so anything that reaches
// the real NCCL directly — functions the shim does not export, other libraries — still works), and
// this table maps the handle to its comm id (trace/comm_id.h), size, rank and sequence counters. Both modes use it.
// Lookups are lock-free (open addressing over a fixed array of atomic keys); inserts and removals
// (communicator creation and destruction, rare) take a mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nshim {

struct CommState {
  uint64_t commId = 0;
  std::atomic<int32_t> nranks{-1};  // -1 until known (a split comm that was still initializing)
  std::atomic<int32_t> rank{-1};
  std::atomic<int32_t> device{-1};
  std::atomic<uint64_t> nextSeq{0};    // next operation's sequence number: a load and a store, no
                                       // atomic add (NCCL takes one thread at a time per communicator)
  std::atomic<uint64_t> nextSplit{0};  // next split/shrink's sequence number (trace/comm_id.h)
};

// The state of `comm`, or nullptr when it is not a communicator created through the shim.
CommState* findComm(const void* comm) noexcept;
// Adds (or, for an address NCCL reused, resets) the state of `comm`; nullptr when the table is full
// (then a warning is logged once and the communicator is recorded with comm id 0).
CommState* registerComm(const void* comm, uint64_t commId, int nranks, int rank) noexcept;
void forgetComm(const void* comm) noexcept;

}  // namespace nshim
