// The ibverbs transport's control side, as hooks of the network transports' shared core
// (transport/core/network_transport.h): queueing a post, sleeping in poll() on the completion
// channel and the bootstrap sockets of the peers with pending work, peer loss (end of stream on a
// peer's bootstrap socket, or a failed completion), abort, and teardown, which first waits for the
// last signaled writes so that a peer receives everything sent before it.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/ibverbs/ibverbs_transport_impl.h"
#include "transport/ibverbs/split_data_on_qps.h"

namespace nshim::ib {
namespace {

constexpr int kPollCapMs = 100;
constexpr int64_t kPeerCheckNs = 2'000'000;  // how often a spinning waiter looks at the peers' sockets
constexpr double kDrainSeconds = 10;

}  // namespace

IbverbsTransport::IbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks, int linksPerPeer,
                                   const RingShape& shape, int spinMicroseconds, bool postThread)
    : NetworkTransport("ibverbs", "ibverbs", rank, nranks,
                       SpinPolicy{static_cast<int64_t>(std::max(spinMicroseconds, 0)) * 1000, true}),
      res_(std::move(resources)), api_(*res_->api), linksPerPeer_(linksPerPeer), shape_(shape), wcs_(32),
      poster_(postThread ? std::make_unique<WritePoster>() : nullptr) {
  active_.reserve(res_->connections.size());
  const uint32_t ringLkey = res_->mr ? res_->mr->lkey : 0;
  for (Connection& c : res_->connections) c.attach(*this, peers_[c.peer], shape_, api_, ringLkey, poster_.get(), rank_);
}

IbverbsTransport::~IbverbsTransport() {
  std::lock_guard<std::mutex> lock(mutex_);
  // The peers still learn of the end of requests still queued (QPs to error, sockets shut down).
  Status pendingError = forgetPendingRequestsLocked();
  bool pending = false;
  for (Connection* c : active_) pending = pending || c->owesRequests();
  if (pending) {
    abortLocked(pendingError);
  } else if (!aborted_) {
    drainBeforeTeardown(Deadline::after(kDrainSeconds));
  }
  drainChannelLocked();
  if (unackedEvents_ > 0) api_.ackCqEvents(res_->cq.get(), unackedEvents_);  // before the CQ is destroyed
  unackedEvents_ = 0;
}  // res_ destroys QPs, CQ, channel, MR, memory, PD and context in that order

void IbverbsTransport::enqueueLocked(int peer, Request* req, char* buf, bool isSend) {
  const int perGroup = static_cast<int>(shape_.qpsPerConnection);
  if (shape_.splitDataOnQps && perGroup > 1) return enqueueSplitLocked(peer, req, buf, isSend);
  queueOnLink(connection(peer, static_cast<uint64_t>(peers_[peer].nextLink(*req, isSend, linksPerPeer_, perGroup))),
              req, buf, isSend);
}

void IbverbsTransport::queueOnLink(Connection& c, Request* req, char* buf, bool isSend) {
  const size_t bytes = req->bytes;
  bool wasIdle = isSend ? c.sends.empty() : c.recvs.empty();
  const ibv_mr* region = bytes >= shape_.zeroCopyMin && shape_.zeroCopyMin > 0 ? regionHolding(buf, bytes) : nullptr;
  (isSend ? c.sends : c.recvs).push(PendingOp{req, buf, 0, false, false, region});
  activate(c);
  if (wasIdle) c.service();  // small messages leave (or arrived data lands) before the caller waits
}

// Both ends cut a message alike (a receive is of exactly the bytes sent), so part i of the k-th
// message of a group meets its receive as the k-th message on the group's link i.
void IbverbsTransport::enqueueSplitLocked(int peer, Request* req, char* buf, bool isSend) {
  const int perGroup = static_cast<int>(shape_.qpsPerConnection);
  const int first = peers_[peer].nextSplitGroup(*req, isSend, linksPerPeer_, perGroup);
  SplitRequest& split = splits_.emplace_back();
  split.whole = req;
  split.count = perGroup;
  split.parts = std::make_unique<Request[]>(static_cast<size_t>(perGroup));
  for (int i = 0; i < perGroup; ++i) {
    const QpSplitPart cut = qpSplitPart(req->bytes, perGroup, i);
    Request& part = split.parts[static_cast<size_t>(i)];
    part.peer = peer;
    part.tag = req->tag;
    part.bytes = cut.bytes;
    part.isSend = isSend;
    part.channel = req->channel;
    queueOnLink(connection(peer, static_cast<uint64_t>(first + i)), &part, buf + cut.offset, isSend);
  }
}

bool IbverbsTransport::settleSplitsLocked() {
  if (forgettingRequests()) return false;  // the callers' requests may be gone
  size_t kept = 0;
  for (size_t i = 0; i < splits_.size(); ++i) {
    SplitRequest& split = splits_[i];
    const Status* error = nullptr;
    bool done = true;
    for (int p = 0; p < split.count && done; ++p) {
      const Request& part = split.parts[static_cast<size_t>(p)];
      done = part.done();
      if (done && !part.status().ok() && error == nullptr) error = &part.status();
    }
    if (!done) {
      if (kept != i) splits_[kept] = std::move(split);
      ++kept;
    } else if (error != nullptr) {
      fail(split.whole, *error);
    } else {
      split.whole->complete(Status());
    }
  }
  const bool settled = kept != splits_.size();
  splits_.resize(kept);
  return settled;
}

bool IbverbsTransport::progressLocked() {
  bool moved = datapathPassLocked();
  if (!splits_.empty()) moved = settleSplitsLocked() || moved;
  checkPeersLocked(false);
  return moved;
}

// Peers other than `except` known lost already, or whose bootstrap socket has ended or failed now:
// when one peer goes, a job-wide failure (a killed rank whose neighbours aborted in turn) often has
// a root cause elsewhere, and the error should name it.
std::vector<int> IbverbsTransport::otherEndedPeersLocked(int except) {
  std::vector<pollfd> fds;
  std::vector<int> peers;
  std::vector<int> gone;
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_ || p == except || !res_->peerSockets[p].valid()) continue;
    if (peers_[p].lost) {  // gone earlier, perhaps owing nothing then (its last sends had completed)
      gone.push_back(p);
      continue;
    }
    fds.push_back(pollfd{res_->peerSockets[p].get(), POLLIN | POLLRDHUP, 0});
    peers.push_back(p);
  }
  if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return gone;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0 && connectionEnded(fds[i].fd)) gone.push_back(peers[i]);
  }
  return gone;
}

// Fragments that arrived before the loss still complete receives (like bytes before a socket's end).
void IbverbsTransport::beforePeerLostLocked(int peer) {
  for (int index = 0; index < linksPerPeer_ && !aborted_; ++index) {
    Connection& c = res_->connections[static_cast<size_t>(peer) * linksPerPeer_ + index];
    if (!c.recvs.empty()) c.driveRecvs();
  }
}

// A peer that left owing nothing is no news.
bool IbverbsTransport::peerLossWorthWarningLocked(int peer) {
  bool pending = false;
  for (int index = 0; index < linksPerPeer_; ++index) {
    pending = pending || res_->connections[static_cast<size_t>(peer) * linksPerPeer_ + index].owesRequests();
  }
  return pending;
}

void IbverbsTransport::dropPeerLocked(int peer, const Status& why, const std::vector<int>& alsoEnded) {
  for (int index = 0; index < linksPerPeer_; ++index) {
    res_->connections[static_cast<size_t>(peer) * linksPerPeer_ + index].failAll(why);
  }
  if (res_->peerSockets[peer].valid()) ::shutdown(res_->peerSockets[peer].get(), SHUT_RDWR);
  for (int other : alsoEnded) failPeerLocked(other, "its bootstrap connection reached end of stream");
}

void IbverbsTransport::dropAllLocked(const Status& why) {
  if (poster_) poster_->dropQueued();
  for (Connection& c : res_->connections) c.failAll(why);
  for (Fd& fd : res_->peerSockets) {
    if (fd.valid()) ::shutdown(fd.get(), SHUT_RDWR);  // peers see the end of stream at once
  }
  for (Connection* c : active_) c->active = false;
  active_.clear();
}

// The bootstrap sockets of the peers we wait for (sends or receives pending), appended to `fds`.
void IbverbsTransport::collectPeerPollFds(std::vector<pollfd>* fds, std::vector<int>* peers) {
  peers->clear();
  for (Connection* c : active_) {
    if (!c->owesRequests() || peers_[c->peer].lost) continue;
    if (std::find(peers->begin(), peers->end(), c->peer) == peers->end()) peers->push_back(c->peer);
  }
  for (int peer : *peers) fds->push_back(pollfd{res_->peerSockets[peer].get(), POLLIN | POLLRDHUP, 0});
}

// A peer's socket carries nothing after setup: readable means end of stream or an error.
void IbverbsTransport::handlePeerEvents(const pollfd* fds, const std::vector<int>& peers) {
  for (size_t i = 0; i < peers.size(); ++i) {
    if (fds[i].revents == 0) continue;
    char byte;
    ssize_t n = ::recv(fds[i].fd, &byte, 1, MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) continue;
    std::string why = n == 0 ? "its bootstrap connection reached end of stream"
                             : fmt::format("its bootstrap connection failed: {}", std::strerror(errno));
    while (pollCqLocked()) {  // take in whatever it delivered before it went
    }
    completeDirectSendsTo(peers[i]);
    failPeerLocked(peers[i], why);
  }
}

void IbverbsTransport::checkPeersLocked(bool force) {
  int64_t now = nowNs();
  if (!force && now - lastPeerCheckNs_ < kPeerCheckNs) return;
  lastPeerCheckNs_ = now;
  pollFds_.clear();
  collectPeerPollFds(&pollFds_, &pollPeers_);
  if (pollFds_.empty() || ::poll(pollFds_.data(), pollFds_.size(), 0) <= 0) return;
  handlePeerEvents(pollFds_.data(), pollPeers_);
}

// Sleeps until a completion event, a peer's socket event, or kPollCapMs. Local vectors: several
// threads may wait at once. Returns true when something happened.
bool IbverbsTransport::sleepUntilNews(Deadline deadline) {
  std::vector<pollfd> fds;
  std::vector<int> peers;
  size_t first = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) return true;
    if (ibv_req_notify_cq(res_->cq.get(), 0) != 0) {
      NS_WARN("rank {}: ibv_req_notify_cq failed; polling with sleeps instead", rank_);
    } else {
      if (datapathPassLocked()) return true;  // completions that raced the arming
      fds.push_back(pollfd{res_->channel->fd, POLLIN, 0});
      first = 1;
    }
    collectPeerPollFds(&fds, &peers);
  }
  int ready = ::poll(fds.data(), fds.size(), std::min(deadline.remainingMs(kPollCapMs), kPollCapMs));
  if (ready <= 0) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (first == 1 && (fds[0].revents & POLLIN)) drainChannelLocked();
  if (!peers.empty()) {
    lastPeerCheckNs_ = nowNs();
    handlePeerEvents(fds.data() + first, peers);
  }
  return true;
}

void IbverbsTransport::drainChannelLocked() {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (api_.getCqEvent(res_->channel.get(), &cq, &context) == 0) {  // the channel fd is non-blocking
    if (++unackedEvents_ >= 64) {
      api_.ackCqEvents(res_->cq.get(), unackedEvents_);
      unackedEvents_ = 0;
    }
  }
}

// Waits until the data writes are complete (the last write of each burst is signaled), so that
// destroying the QPs cannot drop data a peer still expects. A peer whose bootstrap socket ends has
// gone already: it received all it wanted, so its writes are not waited for.
void IbverbsTransport::drainBeforeTeardown(Deadline deadline) {
  std::vector<pollfd> fds;
  std::vector<int> peers;
  while (!aborted_) {
    fds.clear();
    peers.clear();
    for (const Connection& c : res_->connections) {
      if (!c.hasQps() || peers_[c.peer].lost || c.outbound.wrRetired >= c.outbound.drainTarget) continue;
      if (std::find(peers.begin(), peers.end(), c.peer) == peers.end()) {
        peers.push_back(c.peer);
        fds.push_back(pollfd{res_->peerSockets[c.peer].get(), POLLIN | POLLRDHUP, 0});
      }
    }
    if (peers.empty()) return;
    if (deadline.expired()) {
      NS_WARN("rank {}: ibverbs teardown gave up waiting for its last writes to rank {} to complete", rank_,
              peers.front());
      return;
    }
    if (datapathPassLocked()) continue;
    if (::poll(fds.data(), fds.size(), 0) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        char byte;
        if (fds[i].revents != 0 && ::recv(fds[i].fd, &byte, 1, MSG_DONTWAIT) == 0) peers_[peers[i]].lost = true;
      }
    }
    ::usleep(50);
  }
}

std::unique_ptr<Transport> makeIbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks,
                                                int linksPerPeer, const RingShape& shape, int spinMicroseconds,
                                                bool postThread) {
  return std::make_unique<IbverbsTransport>(std::move(resources), rank, nranks, linksPerPeer, shape, spinMicroseconds,
                                            postThread);
}

}  // namespace nshim::ib
