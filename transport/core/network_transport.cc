// The network transports' shared control skeleton (network_transport.h): post, the spin-then-sleep
// wait, byte counters, peer loss, abort.
#include "transport/core/network_transport.h"

#include <sched.h>

#include <optional>

#include "common/log.h"
#include "transport/bootstrap/bootstrap.h"  // formatRankList

namespace nshim {

NetworkTransport::NetworkTransport(const char* name, const char* label, int rank, int nranks, SpinPolicy spin)
    : rank_(rank), nranks_(nranks), peers_(nranks), name_(name), label_(label), spin_(spin) {}

Status NetworkTransport::postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) {
  return post(peer, tag, const_cast<char*>(static_cast<const char*>(buf)), bytes, req, true);
}

Status NetworkTransport::postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) {
  return post(peer, tag, static_cast<char*>(buf), bytes, req, false);
}

Status NetworkTransport::post(int peer, uint64_t tag, char* buf, size_t bytes, Request* req, bool isSend) {
  NS_RETURN_IF_ERROR(startRequest(req, rank_, nranks_, peer, tag, buf, bytes, isSend));
  if (!connectedTo(peer)) return notConnectedError(rank_, peer, label_);
  std::lock_guard<std::mutex> lock(mutex_);
  PeerLink& state = peers_[peer];
  if (aborted_ || state.lost) {
    fail(req, aborted_ ? abortStatus_ : state.lostStatus);
    return Status::Ok();
  }
  enqueueLocked(peer, req, buf, isSend);
  return Status::Ok();
}

Status NetworkTransport::waitAll(std::span<Request* const> requests, Deadline deadline) {
  const int64_t started = nowNs();
  int64_t spinUntil = started + spin_.spinNs;
  WaitScan scan(requests);
  WaitNoteScope note(waitNote());
  while (true) {
    bool moved;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      moved = progressLocked();
    }
    if (std::optional<Status> settled = scan.settle(failures_.load(std::memory_order_acquire))) return *settled;
    if (deadline.expired()) return timeoutError(rank_, requests, (nowNs() - started) * 1e-9);
    const int64_t now = nowNs();
    if (moved) spinUntil = now + spin_.spinNs;
    if (now < spinUntil) {
      // A peer woken by our send (or the soft-RoCE kernel thread) may have been placed on our CPU:
      // let it run instead of spinning it out (without this, two ranks on one core take turns of a
      // whole spin).
      if (spin_.yieldWhileSpinning) sched_yield();
      continue;
    }
    note.sleepingOn(scan.pending());
    if (sleepUntilNews(deadline)) spinUntil = nowNs() + spin_.spinNs;
  }
}

Status NetworkTransport::progress() {
  std::lock_guard<std::mutex> lock(mutex_);
  progressLocked();
  return aborted_ ? abortStatus_ : Status::Ok();
}

PeerBytes NetworkTransport::peerBytes(int peer) const {
  if (peer < 0 || peer >= nranks_) return PeerBytes{};
  const PeerLink& link = peers_[peer];
  PeerBytes bytes;
  bytes.sent = link.sent.load(std::memory_order_relaxed);
  bytes.received = link.received.load(std::memory_order_relaxed);
  bytes.receivedZeroCopy = link.receivedZeroCopy.load(std::memory_order_relaxed);
  bytes.sentMessages = link.sentMessages.load(std::memory_order_relaxed);
  bytes.sentWire = link.sentWire.load(std::memory_order_relaxed);
  bytes.sendLinks = link.sendLinks();
  return bytes;
}

void NetworkTransport::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!aborted_)
    abortLocked(NS_ERROR(Code::kRemoteError, "rank {} aborted its {} transport: {}", rank_, label_, reason));
}

void NetworkTransport::fail(Request* req, const Status& status) {
  if (!forgetRequests_) req->complete(status);
  failures_.fetch_add(1, std::memory_order_release);
}

void NetworkTransport::failPeerLocked(int peer, const std::string& detail, const char* cause) {
  PeerLink& state = peers_[peer];
  if (state.lost) return;
  const std::vector<int> alsoEnded = otherEndedPeersLocked(peer);
  beforePeerLostLocked(peer);
  state.lost = true;
  state.lostStatus =
      NS_ERROR(Code::kRemoteError, "rank {}: connection to rank {} lost ({}): {}{}", rank_, peer, cause, detail,
               alsoEnded.empty() ? std::string()
                                 : fmt::format("; the connections to {} {} have ended too",
                                               alsoEnded.size() == 1 ? "rank" : "ranks", formatRankList(alsoEnded)));
  if (peerLossWorthWarningLocked(peer)) NS_WARN("{}", state.lostStatus.message());
  dropPeerLocked(peer, state.lostStatus, alsoEnded);
}

void NetworkTransport::abortLocked(const Status& why) {
  aborted_ = true;
  abortStatus_ = why;
  dropAllLocked(why);
}

Status NetworkTransport::forgetPendingRequestsLocked() {
  forgetRequests_ = true;
  return NS_ERROR(Code::kRemoteError, "rank {}: {} transport destroyed with requests pending", rank_, label_);
}

}  // namespace nshim
