// Routing by node (node_routed_transport.h).
#include "transport/node_routed_transport.h"

#include <thread>

#include "transport/wait_note.h"

namespace nshim {
namespace {

class NodeRoutedTransport final : public Transport {
 public:
  NodeRoutedTransport(std::unique_ptr<Transport> intra, std::unique_ptr<Transport> net, std::vector<bool> sameNode)
      : intra_(std::move(intra)), net_(std::move(net)), sameNode_(std::move(sameNode)) {}

  int rank() const override { return net_->rank(); }
  int nranks() const override { return net_->nranks(); }
  const char* name() const override { return net_->name(); }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) override {
    return route(peer).postSend(peer, tag, buf, bytes, req);
  }
  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) override {
    return route(peer).postRecv(peer, tag, buf, bytes, req);
  }

  // Requests of one side only wait on that side; a mix drives both until all are done.
  // The stall reports read this transport's note: it names the first pending request for the
  // whole wait (the side that waits keeps its own note).
  Status waitAll(std::span<Request* const> requests, Deadline deadline) override {
    bool anyIntra = false, anyNet = false;
    const Request* firstPending = nullptr;
    for (const Request* req : requests) {
      (isIntra(req->peer) ? anyIntra : anyNet) = true;
      if (!firstPending && !req->done()) firstPending = req;
    }
    WaitNoteScope note(waitNote());
    note.sleepingOn(firstPending);
    if (!anyIntra) return net_->waitAll(requests, deadline);
    if (!anyNet) return intra_->waitAll(requests, deadline);
    const int64_t started = nowNs();
    while (true) {
      NS_RETURN_IF_ERROR(intra_->progress());
      NS_RETURN_IF_ERROR(net_->progress());
      bool pending = false;
      for (Request* req : requests) {
        if (!req->done()) pending = true;
        else if (!req->status().ok()) return req->status();
      }
      if (!pending) return Status::Ok();
      if (deadline.expired()) return timeoutError(rank(), requests, (nowNs() - started) * 1e-9);
      std::this_thread::yield();
    }
  }

  Status progress() override {
    NS_RETURN_IF_ERROR(intra_->progress());
    return net_->progress();
  }

  PeerBytes peerBytes(int peer) const override {
    return isIntra(peer) ? intra_->peerBytes(peer) : net_->peerBytes(peer);
  }

  void abort(const std::string& reason) override {
    intra_->abort(reason);
    net_->abort(reason);
  }

  Status registerMemory(const void* buf, size_t bytes) override { return net_->registerMemory(buf, bytes); }
  Status deregisterMemory(const void* buf) override { return net_->deregisterMemory(buf); }

 private:
  bool isIntra(int peer) const {
    return peer >= 0 && peer < static_cast<int>(sameNode_.size()) && sameNode_[peer];
  }
  Transport& route(int peer) { return isIntra(peer) ? *intra_ : *net_; }

  std::unique_ptr<Transport> intra_;
  std::unique_ptr<Transport> net_;
  std::vector<bool> sameNode_;
};

}  // namespace

std::unique_ptr<Transport> createNodeRoutedTransport(std::unique_ptr<Transport> intra, std::unique_ptr<Transport> net,
                                                     std::vector<bool> sameNode) {
  return std::make_unique<NodeRoutedTransport>(std::move(intra), std::move(net), std::move(sameNode));
}

}  // namespace nshim
