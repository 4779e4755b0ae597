// The transport interface: tagged, non-blocking sends and receives of byte ranges between the ranks
// of one communicator, with deadlines and per-peer byte counters. Collectives are written only
// against this interface; implementations: in-process (threads as ranks), TCP, ibverbs.
//
// Matching rule: between an ordered pair of ranks, the k-th send posted by the sender matches the
// k-th receive posted by the receiver. The two must carry the same tag and the same length; a
// mismatch fails the receive with a message naming both ranks (that is how ranks that disagree about
// an operation are caught). A transport may spread consecutive messages of a pair over several
// connections, so algorithms slice large transfers to get parallelism; an algorithm that runs
// NCCL's channels puts each channel's messages on its own connection (Request::channel), as NCCL
// gives every channel its own connection: both ends must give a message the same channel.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/nccl_protocol.h"
#include "common/status.h"
#include "transport/core/wait_note.h"

namespace nshim {

// Completion record of one posted send or receive. Owned by the caller; it and the buffer must stay
// alive until done() is true (or the transport has been aborted).
class Request {
 public:
  bool done() const { return done_.load(std::memory_order_acquire); }
  // The outcome once done(); an error names the peer.
  const Status& status() const { return status_; }

  // For transports: mark complete. Writes status before publishing done.
  void complete(Status status) {
    status_ = std::move(status);
    done_.store(true, std::memory_order_release);
  }
  void reset() {
    done_.store(false, std::memory_order_relaxed);
    status_ = Status();
  }

  // Filled in by postSend/postRecv, read by transports and error messages.
  int peer = -1;
  uint64_t tag = 0;
  size_t bytes = 0;
  bool isSend = false;
  // Set by the caller before posting (posts leave it alone): the NCCL channel the message belongs
  // to. Transports with several connections per peer carry channel c on connection c mod their
  // count; -1 (the default) spreads messages over them round robin.
  int channel = -1;

 private:
  std::atomic<bool> done_{false};
  Status status_;
};

struct PeerBytes {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t receivedZeroCopy = 0;  // of `received`, written straight into registered buffers
  uint64_t sentMessages = 0;      // sends posted to the peer
  // Bytes this rank's connections carried to the peer as the transport protocol's payload: the
  // messages plus the transport's own framing (TCP: a 24-byte header per message; ibverbs: every
  // RDMA write and send, i.e. fragment headers, credits and zero-copy offers). TCP/IP, UDP and
  // RoCE headers are not counted. 0 for the in-process transport.
  uint64_t sentWire = 0;
  // Connections to the peer that carried at least one send (flows on a fabric): with channels,
  // one per channel used (Request::channel), up to the transport's connections per peer.
  uint32_t sendLinks = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  virtual const char* name() const = 0;

  // Post a send of `bytes` bytes at `buf` to `peer`. Never blocks.
  virtual Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) = 0;
  // Post a receive of exactly `bytes` bytes from `peer` into `buf`. Never blocks.
  virtual Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) = 0;

  // Drive progress until every request is done. Fails on the first failed request, or with a
  // timeout naming the peer that is still owed when the deadline passes.
  virtual Status waitAll(std::span<Request* const> requests, Deadline deadline) = 0;

  // One non-blocking pass of progress (for callers that overlap work with communication).
  virtual Status progress() = 0;

  // Payload bytes moved to/from each peer since creation (headers not counted).
  virtual PeerBytes peerBytes(int peer) const = 0;

  // Fail every pending request and drop connections so that peers notice. Idempotent.
  virtual void abort(const std::string& reason) = 0;

  // Registers [buf, buf + bytes) for zero-copy transfers (NCCL's ncclCommRegister): transports
  // that can (ibverbs) move large messages between registered buffers without staging copies. The
  // memory must stay mapped until deregisterMemory(buf); registered ranges must not overlap.
  // Transports that gain nothing accept and ignore it.
  virtual Status registerMemory(const void* buf, size_t bytes) { return Status::Ok(); }
  // Ends the registration that started at `buf`; no transfer may still use it.
  virtual Status deregisterMemory(const void* buf) { return Status::Ok(); }

  // The NCCL protocol of the messages posted from now on (common/nccl_protocol.h): a transport that frames
  // messages by protocol (protocol_framing_transport.h) moves them in its lines; others ignore it.
  // Both ends of a message must have posted it under the same protocol.
  virtual void setProtocol(Protocol protocol) {}

  // What a waitAll now sleeping waits for (wait_note.h): set by the implementations, read by
  // stall reports from any thread. A transport that waits through another one returns that one's.
  virtual WaitNote& waitNote() { return waitNote_; }
  const WaitNote& waitNote() const { return const_cast<Transport*>(this)->waitNote(); }

 private:
  WaitNote waitNote_;
};

// Owns one registration: deregisters it on destruction (the transport must outlive it).
class MemoryRegistration {
 public:
  MemoryRegistration() = default;
  ~MemoryRegistration() { reset(); }
  MemoryRegistration(MemoryRegistration&& other) noexcept
      : transport_(std::exchange(other.transport_, nullptr)), buf_(other.buf_) {}
  MemoryRegistration& operator=(MemoryRegistration&& other) noexcept {
    if (this != &other) {
      reset();
      transport_ = std::exchange(other.transport_, nullptr);
      buf_ = other.buf_;
    }
    return *this;
  }
  MemoryRegistration(const MemoryRegistration&) = delete;
  MemoryRegistration& operator=(const MemoryRegistration&) = delete;

  static Result<MemoryRegistration> create(Transport& transport, const void* buf, size_t bytes) {
    NS_RETURN_IF_ERROR(transport.registerMemory(buf, bytes));
    MemoryRegistration registration;
    registration.transport_ = &transport;
    registration.buf_ = buf;
    return registration;
  }
  void reset() {
    if (transport_ != nullptr) (void)transport_->deregisterMemory(buf_);
    transport_ = nullptr;
  }

 private:
  Transport* transport_ = nullptr;
  const void* buf_ = nullptr;
};

// Convenience: wait for one request.
inline Status waitOne(Transport& transport, Request* req, Deadline deadline) {
  Request* list[1] = {req};
  return transport.waitAll(list, deadline);
}

// A timeout error that names the first unfinished request's peer. Shared by transports.
Status timeoutError(int selfRank, std::span<Request* const> requests, double waitedSeconds);

}  // namespace nshim
