// The control skeleton the network transports (TCP, ibverbs) share, written once: posting (checks,
// a failed peer or an aborted transport fails the request at once, else the transport queues it on
// one of the peer's connections), the wait loop (progress passes, a spin that yields the CPU, then
// sleeping in the transport's own way until something happens or the deadline passes), per-peer
// byte counters, peer loss (one message naming the peer and any others whose connections ended
// too), abort, and failing the queued requests. A transport plugs in its data path through the
// hooks below; everything runs under one mutex, which waiters drop while they sleep.
//
// A new network transport derives from NetworkTransport and implements the hooks; a transport
// that is not a mesh of connections to peers (in-process, shared memory) implements Transport.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/core/peer_link.h"
#include "transport/core/transport.h"

namespace nshim {

class NetworkTransport : public Transport {
 public:
  // How waitAll spins before it sleeps.
  struct SpinPolicy {
    int64_t spinNs = 0;              // busy-poll this long (re-armed after every wake-up) before sleeping
    bool yieldWhileSpinning = true;  // sched_yield() on each turn: a peer on this CPU gets to run
  };

  int rank() const final { return rank_; }
  int nranks() const final { return nranks_; }
  const char* name() const final { return name_; }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) final;
  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) final;
  Status waitAll(std::span<Request* const> requests, Deadline deadline) final;
  Status progress() final;
  PeerBytes peerBytes(int peer) const final;
  void abort(const std::string& reason) final;

 protected:
  // `name` is Transport::name() ("tcp"); `label` is how messages call it ("TCP").
  NetworkTransport(const char* name, const char* label, int rank, int nranks, SpinPolicy spin);

  // ---- Hooks of the transport's data path. The ...Locked ones run under mutex_.
  // Whether this rank has connections to `peer` (a pair left out meets over shared memory).
  virtual bool connectedTo(int peer) const = 0;
  // Queues a checked request on one of the peer's connections (peers_[peer].nextLink chooses it)
  // and may start moving it.
  virtual void enqueueLocked(int peer, Request* req, char* buf, bool isSend) = 0;
  // One non-blocking progress pass (and whatever liveness checks go with it). True when the spin
  // should start over because something moved.
  virtual bool progressLocked() = 0;
  // Called without the mutex: sleeps until the connections have news or a short cap passes (never
  // past the deadline). True when something happened (the spin starts over).
  virtual bool sleepUntilNews(Deadline deadline) = 0;
  // Peers other than `peer` whose connections have ended as well, for the loss message.
  virtual std::vector<int> otherEndedPeersLocked(int peer) = 0;
  // Before `peer` is marked lost: take in what it delivered before it went.
  virtual void beforePeerLostLocked(int peer) {}
  // Whether the loss of `peer` is worth a warning (it is always an error for the requests).
  virtual bool peerLossWorthWarningLocked(int peer) { return true; }
  // Fails the requests queued for `peer` with `why` and drops its connections; `alsoEnded` are the
  // other peers named in the message.
  virtual void dropPeerLocked(int peer, const Status& why, const std::vector<int>& alsoEnded) = 0;
  // Fails every queued request with `why` and drops every connection so that peers notice.
  virtual void dropAllLocked(const Status& why) = 0;

  // ---- For the implementations.
  // Completes `req` with an error (unless the destructor is forgetting requests) and counts it.
  void fail(Request* req, const Status& status);
  template <typename Queue>
  void failQueue(Queue& queue, const Status& why) {
    while (!queue.empty()) {
      Request* req = queue.front().req;
      queue.pop();
      fail(req, why);
    }
  }
  // Marks `peer` lost (once) with the shared message, and fails what it owed.
  // `cause` says how it was lost: the default fits a connection that ended; a link that failed
  // under a live peer (an RDMA completion error, a port down) says kLinkFailed.
  static constexpr const char* kPeerGone = "peer exited or was killed";
  static constexpr const char* kLinkFailed = "the link to it failed; the peer may still be running";
  void failPeerLocked(int peer, const std::string& detail, const char* cause = kPeerGone);
  void abortLocked(const Status& why);
  // For the destructor: from now on queued requests are forgotten, not completed (nobody can wait
  // on them any more and their memory may be gone); the error to abort with when some are queued.
  Status forgetPendingRequestsLocked();
  bool forgettingRequests() const { return forgetRequests_; }

  const int rank_;
  const int nranks_;
  std::mutex mutex_;  // queues, connection state and the fields below
  std::vector<PeerLink> peers_;
  bool aborted_ = false;
  Status abortStatus_;

 private:
  Status post(int peer, uint64_t tag, char* buf, size_t bytes, Request* req, bool isSend);

  const char* const name_;
  const char* const label_;
  const SpinPolicy spin_;
  std::atomic<uint64_t> failures_{0};
  bool forgetRequests_ = false;
};

}  // namespace nshim
