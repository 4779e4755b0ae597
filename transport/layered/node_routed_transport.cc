// Routing by node (node_routed_transport.h).
#include "transport/layered/node_routed_transport.h"

#include <thread>

#include "transport/core/wait_note.h"

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

  // Every wait drives both transports, whichever its requests are on: a shared-memory send moves
  // only while its sender makes progress (there is no kernel buffer to hold it), so a rank waiting
  // on a TCP receive must keep pushing its shared-memory sends, or a ring of nodes deadlocks. Spins
  // while requests complete, then sleeps briefly between passes.
  Status waitAll(std::span<Request* const> requests, Deadline deadline) override {
    const int64_t started = nowNs();
    int64_t spinUntil = started + kSpinNs;
    size_t doneBefore = 0;
    WaitNoteScope note(waitNote());
    while (true) {
      NS_RETURN_IF_ERROR(intra_->progress());
      NS_RETURN_IF_ERROR(net_->progress());
      const Request* pending = nullptr;
      size_t done = 0;
      for (Request* req : requests) {
        if (!req->done()) {
          if (!pending) pending = req;
        } else if (!req->status().ok()) {
          return req->status();
        } else {
          ++done;
        }
      }
      if (!pending) return Status::Ok();
      const int64_t now = nowNs();
      if (done != doneBefore) spinUntil = now + kSpinNs;  // still completing
      doneBefore = done;
      if (deadline.expired()) return timeoutError(rank(), requests, (now - started) * 1e-9);
      if (now < spinUntil) {
        std::this_thread::yield();
      } else {
        note.sleepingOn(pending);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
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
  bool isIntra(int peer) const { return peer >= 0 && peer < static_cast<int>(sameNode_.size()) && sameNode_[peer]; }
  Transport& route(int peer) { return isIntra(peer) ? *intra_ : *net_; }

  static constexpr int64_t kSpinNs = 100'000;

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
