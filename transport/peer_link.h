// What the network transports (TCP, ibverbs) share per peer: sequence numbers that map the k-th
// send/receive to a connection, byte counters, failure state, and the checks and request set-up
// every post starts with.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/status.h"
#include "transport/transport.h"

namespace nshim {

struct PeerLink {
  uint64_t sendSeq = 0;
  uint64_t recvSeq = 0;
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> received{0};
  bool lost = false;
  Status lostStatus;
};

// Single writer (under the transport mutex): a plain load/store keeps the hot path lock-free.
inline void addRelaxed(std::atomic<uint64_t>& counter, uint64_t value) {
  counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
}

// Checks a post's peer (another rank of the transport) and buffer (not null unless empty), then
// resets `req` and fills in peer, tag, bytes and direction.
inline Status startRequest(Request* req, int self, int nranks, int peer, uint64_t tag, const void* buf, size_t bytes,
                           bool isSend) {
  if (peer < 0 || peer >= nranks || peer == self) {
    return NS_ERROR(Code::kInvalidArgument, "peer {} out of range for rank {} of {}", peer, self, nranks);
  }
  if (buf == nullptr && bytes > 0) return NS_ERROR(Code::kInvalidArgument, "null buffer for {} bytes", bytes);
  req->reset();
  req->peer = peer;
  req->tag = tag;
  req->bytes = bytes;
  req->isSend = isSend;
  return Status::Ok();
}

}  // namespace nshim
