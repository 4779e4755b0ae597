// Shared-memory transport (shm_transport.h). Each ordered pair streams its messages as a 16-byte
// header {tag, length} and the payload through the pair's ring; the sender copies from its buffer
// into the ring as room frees, the receiver from the ring into the posted receive's buffer. The two
// copies overlap (a 256 KiB ring stays in cache), so a large message moves at about memcpy's speed;
// a single copy by process_vm_readv was slower on these VMs (docs/bench_shm.md).
#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "common/fnv1a.h"
#include "common/settings.h"
#include "transport/shm/shm_ring.h"

namespace nshim {
namespace {

struct MessageHeader {
  uint64_t tag;
  uint64_t bytes;
};
constexpr size_t kHeaderBytes = sizeof(MessageHeader);

struct Pending {
  Request* req = nullptr;
  char* buf = nullptr;  // const for sends
  size_t done = 0;      // bytes of header + payload moved so far
};

struct Peer {
  bool local = false;
  ShmRing in;   // its messages to us (we consume)
  ShmRing out;  // our messages to it (we produce)
  std::deque<Pending> sends;
  std::deque<Pending> recvs;
  bool headerRead = false;  // the head receive's header has been matched and consumed
  PeerBytes bytes;
};

std::string ringName(const UniqueId& id, int from, int to) {
  const uint64_t h = fnv1a64(&id, sizeof(id));
  return fmt::format("/ncclshim-{:016x}-{}-{}", h, from, to);
}

class ShmTransport final : public Transport {
 public:
  ShmTransport(int rank, int nranks, const ShmOptions& options)
      : rank_(rank), nranks_(nranks), options_(options), peers_(static_cast<size_t>(nranks)) {}

  Status connect(const UniqueId& id, const std::vector<bool>& local) {
    const Deadline deadline = Deadline::after(options_.timeoutSeconds);
    for (int p = 0; p < nranks_; ++p) {
      peers_[p].local = p != rank_ && local[p];
      if (!peers_[p].local) continue;
      NS_ASSIGN_OR_RETURN(peers_[p].in, ShmRing::create(ringName(id, p, rank_), options_.ringBytes));
    }
    for (int p = 0; p < nranks_; ++p) {
      if (!peers_[p].local) continue;
      Result<ShmRing> out = ShmRing::open(ringName(id, rank_, p), deadline);
      if (!out.ok()) {
        return NS_ERROR(Code::kTimeout,
                        "rank {}: rank {} on this host did not set up its shared memory in {:.0f} s "
                        "({})",
                        rank_, p, options_.timeoutSeconds, out.status().message());
      }
      peers_[p].out = std::move(out).value();
    }
    // Once every producer has attached, the names go: nothing is left in /dev/shm after a crash.
    for (int p = 0; p < nranks_; ++p) {
      if (!peers_[p].local) continue;
      while (!peers_[p].in.producerAttached()) {
        if (deadline.expired()) {
          return NS_ERROR(Code::kTimeout, "rank {}: rank {} on this host never opened its shared-memory ring", rank_,
                          p);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      peers_[p].in.unlinkName();
    }
    return Status::Ok();
  }

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const char* name() const override { return "shm"; }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) override {
    return post(peer, tag, const_cast<char*>(static_cast<const char*>(buf)), bytes, req, true);
  }
  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) override {
    return post(peer, tag, static_cast<char*>(buf), bytes, req, false);
  }

  Status progress() override {
    if (abortRequested_.load(std::memory_order_acquire) && failure_.ok()) {
      std::lock_guard<std::mutex> lock(abortMutex_);
      fail(NS_ERROR(Code::kRemoteError, "communicator aborted by rank {}: {}", rank_, abortReason_));
    }
    if (!failure_.ok()) return failure_;
    for (int p = 0; p < nranks_; ++p) {
      Peer& peer = peers_[p];
      if (!peer.local) continue;
      pushSends(peer);
      NS_RETURN_IF_ERROR(pullReceives(p, peer));
    }
    return Status::Ok();
  }

  Status waitAll(std::span<Request* const> requests, Deadline deadline) override {
    const int64_t started = nowNs();
    int64_t spinUntil = started + int64_t{options_.spinMicroseconds} * 1000;
    int64_t nextHealthCheck = started + kHealthCheckNs;
    WaitNoteScope note(waitNote());
    while (true) {
      const uint64_t movedBefore = moved_;
      Status s = progress();
      const Request* pending = nullptr;
      for (Request* req : requests) {
        if (!req->done()) {
          if (!pending) pending = req;
        } else if (!req->status().ok()) {
          return req->status();
        }
      }
      if (!s.ok()) return s;
      if (!pending) return Status::Ok();
      const int64_t now = nowNs();
      if (moved_ != movedBefore) spinUntil = now + int64_t{options_.spinMicroseconds} * 1000;  // still flowing
      if (now >= nextHealthCheck) {
        nextHealthCheck = now + kHealthCheckNs;
        NS_RETURN_IF_ERROR(checkPeers());
        if (deadline.expired()) return timeoutError(rank_, requests, (now - started) * 1e-9);
      }
      if (now < spinUntil) {
        if (moved_ == movedBefore) std::this_thread::yield();
      } else {
        note.sleepingOn(pending);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }

  PeerBytes peerBytes(int peer) const override {
    return peer >= 0 && peer < nranks_ ? peers_[peer].bytes : PeerBytes{};
  }

  // Thread-safe (a watchdog may call it while the owner waits): the rings' abort flags tell the
  // peers at once; the owner's next pass of progress fails its own requests with the reason.
  void abort(const std::string& reason) override {
    {
      std::lock_guard<std::mutex> lock(abortMutex_);
      if (abortReason_.empty()) abortReason_ = reason.empty() ? "aborted" : reason;
    }
    for (Peer& peer : peers_) {
      if (!peer.local) continue;
      if (peer.out.valid()) peer.out.raiseAbort();
      if (peer.in.valid()) peer.in.raiseAbort();
    }
    abortRequested_.store(true, std::memory_order_release);
  }

 private:
  static constexpr int64_t kHealthCheckNs = 1'000'000;

  Status post(int peer, uint64_t tag, char* buf, size_t bytes, Request* req, bool isSend) {
    if (peer < 0 || peer >= nranks_ || !peers_[peer].local) {
      return NS_ERROR(Code::kInvalidArgument,
                      "rank {}: peer {} is not a rank of this host (shared memory reaches "
                      "only those)",
                      rank_, peer);
    }
    req->reset();
    req->peer = peer;
    req->tag = tag;
    req->bytes = bytes;
    req->isSend = isSend;
    if (!failure_.ok() || abortRequested_.load(std::memory_order_acquire)) {
      (void)progress();  // turns a requested abort into the failure
      req->complete(failure_);
      return Status::Ok();
    }
    (isSend ? peers_[peer].sends : peers_[peer].recvs).push_back(Pending{req, buf, 0});
    if (isSend) {
      ++peers_[peer].bytes.sentMessages;
      peers_[peer].bytes.sendLinks = 1;  // one ring per ordered pair, whatever the channel
      pushSends(peers_[peer]);           // small messages leave at once
    }
    return Status::Ok();
  }

  void pushSends(Peer& peer) {
    while (!peer.sends.empty()) {
      Pending& op = peer.sends.front();
      if (op.done < kHeaderBytes) {
        const MessageHeader header{op.req->tag, op.req->bytes};
        op.done += peer.out.write(reinterpret_cast<const char*>(&header) + op.done, kHeaderBytes - op.done);
        if (op.done < kHeaderBytes) return;
        peer.bytes.sentWire += kHeaderBytes;
      }
      const size_t total = kHeaderBytes + op.req->bytes;
      const size_t moved = op.done - kHeaderBytes;
      const size_t wrote = peer.out.write(op.buf + moved, op.req->bytes - moved);
      op.done += wrote;
      moved_ += wrote;
      peer.bytes.sent += wrote;
      peer.bytes.sentWire += wrote;
      if (op.done < total) return;
      Request* req = op.req;
      peer.sends.pop_front();
      req->complete(Status::Ok());
    }
  }

  Status pullReceives(int from, Peer& peer) {
    while (!peer.recvs.empty()) {
      Pending& op = peer.recvs.front();
      if (!peer.headerRead) {
        if (peer.in.readable() < kHeaderBytes) return Status::Ok();
        MessageHeader header{};
        peer.in.read(&header, kHeaderBytes);
        peer.headerRead = true;
        if (header.tag != op.req->tag || header.bytes != op.req->bytes) {
          Status error = NS_ERROR(Code::kRemoteError,
                                  "rank {} sent {} bytes with tag {:#x} but rank {} expected {} bytes with tag "
                                  "{:#x}: the ranks disagree about the operation",
                                  from, header.bytes, header.tag, rank_, op.req->bytes, op.req->tag);
          fail(error);
          return error;
        }
      }
      const size_t n = std::min(peer.in.readable(), op.req->bytes - op.done);
      if (n > 0) {
        peer.in.read(op.buf + op.done, n);
        op.done += n;
        moved_ += n;
        peer.bytes.received += n;
      }
      if (op.done < op.req->bytes) return Status::Ok();
      Request* req = op.req;
      peer.recvs.pop_front();
      peer.headerRead = false;
      req->complete(Status::Ok());
    }
    return Status::Ok();
  }

  // A peer that aborted or whose process is gone ends the wait, naming it, once this rank still
  // owes it a send or waits for a receive from it: what it wrote before it went is read first
  // (progress runs before this), and a peer that finished and left harms nobody.
  Status checkPeers() {
    for (int p = 0; p < nranks_; ++p) {
      Peer& peer = peers_[p];
      if (!peer.local || (peer.sends.empty() && peer.recvs.empty())) continue;
      if (peer.in.aborted() || peer.out.aborted()) {
        fail(NS_ERROR(Code::kRemoteError, "rank {}: rank {} on this host aborted the communicator", rank_, p));
      } else if (peer.out.peerDied() || peer.in.peerDied()) {
        fail(NS_ERROR(Code::kRemoteError, "rank {}: rank {} lost: its process on this host (pid {}) died", rank_, p,
                      peer.out.peerPid()));
      }
    }
    return failure_;
  }

  void fail(Status why) {
    if (!failure_.ok()) return;
    failure_ = std::move(why);
    for (Peer& peer : peers_) {
      if (!peer.local) continue;
      if (peer.out.valid()) peer.out.raiseAbort();
      if (peer.in.valid()) peer.in.raiseAbort();
      for (auto* queue : {&peer.sends, &peer.recvs}) {
        for (Pending& op : *queue) op.req->complete(failure_);
        queue->clear();
      }
    }
  }

  int rank_;
  int nranks_;
  ShmOptions options_;
  std::vector<Peer> peers_;
  Status failure_;
  uint64_t moved_ = 0;  // bytes progress has moved: a wait keeps spinning while it grows
  std::atomic<bool> abortRequested_{false};
  std::mutex abortMutex_;
  std::string abortReason_;
};

}  // namespace

ShmOptions ShmOptions::fromEnvironment() {
  ShmOptions o;
  o.ringBytes = static_cast<size_t>(settingInt(Setting::NCCLSHIM_SHM_RING_BYTES));
  o.timeoutSeconds = settingDouble(Setting::NCCLSHIM_TIMEOUT);
  o.spinMicroseconds = static_cast<int>(settingInt(Setting::NCCLSHIM_SPIN_US));
  return o;
}

Result<std::unique_ptr<Transport>> connectShmTransport(const UniqueId& id, int rank, int nranks,
                                                       const std::vector<bool>& local, const ShmOptions& options) {
  if (rank < 0 || rank >= nranks || static_cast<int>(local.size()) != nranks || !local[rank]) {
    return NS_ERROR(Code::kInvalidArgument, "shared memory: rank {} of {} with a host map of {} entries", rank, nranks,
                    local.size());
  }
  auto transport = std::make_unique<ShmTransport>(rank, nranks, options);
  NS_RETURN_IF_ERROR(transport->connect(id, local));
  return std::unique_ptr<Transport>(std::move(transport));
}

}  // namespace nshim
