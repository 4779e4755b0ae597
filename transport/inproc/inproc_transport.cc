// In-process transport: a shared fabric holds, for every ordered pair of ranks, the queue of
// posted sends and the queue of posted receives. Whichever side posts second finds its partner at
// the head of the other queue and performs the copy, so completion needs no progress thread.
#include "transport/inproc/inproc_transport.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>

#include "common/log.h"

namespace nshim {
namespace {

struct PendingOp {
  Request* req;
  char* buf;  // const for sends
};

class InProcessFabric {
 public:
  explicit InProcessFabric(int nranks)
      : nranks_(nranks), pairs_(static_cast<size_t>(nranks) * nranks), sent_(static_cast<size_t>(nranks) * nranks),
        received_(static_cast<size_t>(nranks) * nranks) {}

  int nranks() const { return nranks_; }

  Status post(int self, int peer, uint64_t tag, char* buf, size_t bytes, Request* req, bool isSend) {
    req->reset();
    req->peer = peer;
    req->tag = tag;
    req->bytes = bytes;
    req->isSend = isSend;
    int src = isSend ? self : peer;
    int dst = isSend ? peer : self;
    Pair& pair = pairs_[index(src, dst)];
    std::unique_lock<std::mutex> lock(pair.mutex);
    if (failed_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> guard(failMutex_);
      req->complete(failure_);
      return Status::Ok();
    }
    std::deque<PendingOp>& partners = isSend ? pair.recvs : pair.sends;
    if (partners.empty()) {
      (isSend ? pair.sends : pair.recvs).push_back(PendingOp{req, buf});
      return Status::Ok();
    }
    PendingOp partner = partners.front();
    partners.pop_front();
    lock.unlock();
    PendingOp mine{req, buf};
    const PendingOp& send = isSend ? mine : partner;
    const PendingOp& recv = isSend ? partner : mine;
    match(src, dst, send, recv);
    return Status::Ok();
  }

  void fail(const Status& why) {
    {
      std::lock_guard<std::mutex> guard(failMutex_);
      if (failed_.load()) return;
      failure_ = why;
      failed_.store(true, std::memory_order_release);
    }
    for (Pair& pair : pairs_) {
      std::lock_guard<std::mutex> lock(pair.mutex);
      for (auto* queue : {&pair.sends, &pair.recvs}) {
        for (PendingOp& op : *queue) op.req->complete(why);
        queue->clear();
      }
    }
    notifyAll();
  }

  // Blocks until all are done, the fabric failed or the deadline passed.
  Status waitAll(int self, std::span<Request* const> requests, Deadline deadline, WaitNote& waitNote) {
    int64_t started = nowNs();
    WaitNoteScope note(waitNote);
    std::unique_lock<std::mutex> lock(waitMutex_);
    while (true) {
      const Request* pending = nullptr;
      for (Request* req : requests) {
        if (!req->done()) {
          pending = req;
          break;
        }
        if (!req->status().ok()) return req->status();
      }
      if (pending == nullptr) return Status::Ok();
      if (deadline.expired()) return timeoutError(self, requests, (nowNs() - started) * 1e-9);
      note.sleepingOn(pending);
      waitCv_.wait_for(lock, std::chrono::milliseconds(2));
    }
  }

  PeerBytes bytes(int self, int peer) const {
    return PeerBytes{sent_[index(self, peer)].load(), received_[index(peer, self)].load()};
  }

 private:
  struct Pair {
    std::mutex mutex;
    std::deque<PendingOp> sends;
    std::deque<PendingOp> recvs;
  };

  size_t index(int src, int dst) const { return static_cast<size_t>(src) * nranks_ + dst; }

  void match(int src, int dst, const PendingOp& send, const PendingOp& recv) {
    if (send.req->tag != recv.req->tag || send.req->bytes != recv.req->bytes) {
      Status error = NS_ERROR(Code::kRemoteError,
                              "rank {} sent {} bytes with tag {:#x} but rank {} expected {} bytes with tag {:#x}: "
                              "the ranks disagree about the operation",
                              src, send.req->bytes, send.req->tag, dst, recv.req->bytes, recv.req->tag);
      send.req->complete(error);
      recv.req->complete(error);
      fail(error);
      return;
    }
    if (send.req->bytes > 0) std::memcpy(recv.buf, send.buf, send.req->bytes);
    sent_[index(src, dst)] += send.req->bytes;
    received_[index(src, dst)] += send.req->bytes;
    send.req->complete(Status::Ok());
    recv.req->complete(Status::Ok());
    notifyAll();
  }

  void notifyAll() {
    std::lock_guard<std::mutex> lock(waitMutex_);
    waitCv_.notify_all();
  }

  int nranks_;
  std::vector<Pair> pairs_;
  std::vector<std::atomic<uint64_t>> sent_;      // [src][dst]
  std::vector<std::atomic<uint64_t>> received_;  // [src][dst]
  std::mutex failMutex_;
  std::atomic<bool> failed_{false};
  Status failure_;
  std::mutex waitMutex_;
  std::condition_variable waitCv_;
};

class InProcessTransport final : public Transport {
 public:
  InProcessTransport(std::shared_ptr<InProcessFabric> fabric, int rank) : fabric_(std::move(fabric)), rank_(rank) {}

  int rank() const override { return rank_; }
  int nranks() const override { return fabric_->nranks(); }
  const char* name() const override { return "inproc"; }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) override {
    NS_RETURN_IF_ERROR(checkPeer(peer));
    return fabric_->post(rank_, peer, tag, const_cast<char*>(static_cast<const char*>(buf)), bytes, req, true);
  }
  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) override {
    NS_RETURN_IF_ERROR(checkPeer(peer));
    return fabric_->post(rank_, peer, tag, static_cast<char*>(buf), bytes, req, false);
  }
  Status waitAll(std::span<Request* const> requests, Deadline deadline) override {
    return fabric_->waitAll(rank_, requests, deadline, waitNote());
  }
  Status progress() override { return Status::Ok(); }
  PeerBytes peerBytes(int peer) const override { return fabric_->bytes(rank_, peer); }
  void abort(const std::string& reason) override {
    fabric_->fail(NS_ERROR(Code::kRemoteError, "communicator aborted by rank {}: {}", rank_, reason));
  }

 private:
  Status checkPeer(int peer) const {
    if (peer < 0 || peer >= fabric_->nranks() || peer == rank_) {
      return NS_ERROR(Code::kInvalidArgument, "peer {} out of range for rank {} of {}", peer, rank_, fabric_->nranks());
    }
    return Status::Ok();
  }

  std::shared_ptr<InProcessFabric> fabric_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Transport>> createInProcessTransports(int nranks) {
  auto fabric = std::make_shared<InProcessFabric>(nranks);
  std::vector<std::unique_ptr<Transport>> transports;
  for (int rank = 0; rank < nranks; ++rank) {
    transports.push_back(std::make_unique<InProcessTransport>(fabric, rank));
  }
  return transports;
}

}  // namespace nshim
