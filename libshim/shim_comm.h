// The GPU-free communicator behind an ncclComm_t handle: the engine communicator once connected,
// its life-cycle state, the first asynchronous error, the PreMulSum operators created on it, and
// the buffers registered on it (ncclCommRegister) with its transport and the handles given for them.
// The ncclComm_t is not the object's address but a handle of a HandleTable (handle_table.h): a
// pointer it never handed out, or a destroyed communicator's, is refused without being read.
// Operations hold operationMutex() while they run; abortTransport() may be called from any thread
// to fail a running operation (ncclCommAbort).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "collectives/communicator.h"
#include "common/status.h"
#include "libshim/redop_table.h"

namespace nshim {

enum class CommFabric { kTcp, kInProcess };

class ShimComm {
 public:
  // A new communicator and its handle; an error when the handle table is full.
  static Result<std::unique_ptr<ShimComm>> create(int rank, int nranks, int device, CommFabric fabric, uint64_t commId,
                                                  bool blocking);
  ~ShimComm();
  ShimComm(const ShimComm&) = delete;
  ShimComm& operator=(const ShimComm&) = delete;

  // Handle conversion: nullptr when `handle` is null, not a handle of this library, or the handle of
  // a communicator destroyed since (even when a new one now lives at the same address).
  static ShimComm* fromHandle(const void* handle) noexcept;
  void* handle() const { return handle_; }

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int device() const { return device_; }
  CommFabric fabric() const { return fabric_; }
  uint64_t commId() const { return commId_; }
  bool blocking() const { return blocking_; }
  RedOpTable& redOps() { return redOps_; }
  uint64_t nextSplitSeq() { return ++splitSeq_; }
  std::string describe() const;  // "rank 1 of 4 (comm 0x...)" for messages

  // Installs the connected engine communicator (init or split); fails if aborted meanwhile.
  Status attach(std::unique_ptr<Communicator> engine);
  // The connection attempt failed: the communicator stays unusable and reports `status`.
  void failSetup(const Status& status);
  // Only while checkUsable() is ok.
  Communicator& engine() { return *engine_; }

  // Serializes the operations of this communicator.
  std::mutex& operationMutex() { return operationMutex_; }
  // Ok when operations may run; otherwise why not (still connecting, failed, finalized, aborted).
  Status checkUsable() const;
  // An operation failed. Argument and usage errors change nothing; any other error becomes
  // the communicator's asynchronous error and aborts its transport, so that the peers fail at once
  // instead of waiting for their deadline.
  void recordFailure(const Status& status);
  // The first asynchronous error (ok when none).
  Status asyncError() const;
  // The ranks found that they called different operations (call_check.h): `status` becomes the
  // asynchronous error (unless there is one), without aborting the transport, which the ranks
  // still share in step.
  void recordCallMismatch(const Status& status);

  // ncclCommRegister / ncclCommDeregister: registers [buf, buf + bytes) with the transport (zero
  // copy over ibverbs), counted per buffer as NCCL does. A refusal (not connected, overlapping
  // another registration) is not an error: the buffer still works, through the transport's own
  // copies. Under operationMutex().
  // Returns the handle for ncclCommRegister: never reused, valid only on this communicator (null
  // `buf` or zero `bytes`: a handle that registers nothing).
  void* registerBuffer(const void* buf, size_t bytes);
  // False (nothing changed) when `handle` is not a live handle of registerBuffer on this communicator.
  bool deregisterBuffer(const void* handle);

  void markFinalized();
  // Fails any running operation and drops the connections; from any thread, idempotent.
  void abortTransport(const std::string& reason);

 private:
  enum class State { kConnecting, kReady, kFailed, kFinalized, kAborted };

  ShimComm(int rank, int nranks, int device, CommFabric fabric, uint64_t commId, bool blocking);
  // Registers [buf, buf + bytes) with the transport, counted per buffer.
  void registerWithTransport(const void* buf, size_t bytes);

  void* handle_ = nullptr;
  const int rank_;
  const int nranks_;
  const int device_;
  const CommFabric fabric_;
  const uint64_t commId_;
  const bool blocking_;
  uint64_t splitSeq_ = 0;
  RedOpTable redOps_;

  mutable std::mutex stateMutex_;  // state_, asyncError_, engine_ publication
  State state_ = State::kConnecting;
  Status asyncError_;
  std::unique_ptr<Communicator> engine_;
  // After engine_: the registrations end before the transport does.
  struct BufferRegistration {
    MemoryRegistration transport;  // empty when the transport refused it
    int handles = 0;               // ncclCommRegister handles not yet deregistered
  };
  std::map<const void*, BufferRegistration> registrations_;
  std::map<const void*, const void*> registrationHandles_;  // ncclCommRegister handle -> buffer (or null)

  std::mutex operationMutex_;
};

}  // namespace nshim
