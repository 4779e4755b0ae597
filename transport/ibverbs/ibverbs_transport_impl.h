// The ibverbs transport class, shared by its implementation files: ibverbs_transport.cc (the
// hooks of the network transports' shared core, transport/core/network_transport.h: queueing a
// post, sleeping on the completion channel, peer liveness, abort and teardown), ibverbs_progress.cc
// (polling the completion queue, servicing the active links) and ibverbs_zero_copy.cc (registered
// buffers). Each link's data path is its Connection's (ibverbs_connection.h). All connection state
// is guarded by the core's mutex; waiters drop it while they sleep in poll().
#pragma once

#include <poll.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/core/network_transport.h"
#include "transport/ibverbs/ibverbs_connection.h"
#include "transport/ibverbs/ibverbs_poster.h"

namespace nshim::ib {

class IbverbsTransport final : public NetworkTransport, private LinkOwner {
 public:
  IbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks, int linksPerPeer,
                   const RingShape& shape, int spinMicroseconds, bool postThread);
  ~IbverbsTransport() override;

  Status registerMemory(const void* buf, size_t bytes) override;
  Status deregisterMemory(const void* buf) override;

 private:
  Connection& connection(int peer, uint64_t seq) {
    return res_->connections[static_cast<size_t>(peer) * linksPerPeer_ + seq % linksPerPeer_];
  }

  // NCCL_IB_SPLIT_DATA_ON_QPS=1: a caller's request cut over the links of its group, one part each
  // (split_data_on_qps.h); it completes once every part has (with the first part's error, if any).
  struct SplitRequest {
    Request* whole = nullptr;
    std::unique_ptr<Request[]> parts;
    int count = 0;
  };

  // NetworkTransport hooks (ibverbs_transport.cc).
  bool connectedTo(int peer) const override { return res_->peerSockets[peer].valid(); }
  void enqueueLocked(int peer, Request* req, char* buf, bool isSend) override;
  bool progressLocked() override;                   // a data path pass, then (every kPeerCheckNs) the peers' sockets
  bool sleepUntilNews(Deadline deadline) override;  // on the completion channel and the peers' sockets
  std::vector<int> otherEndedPeersLocked(int peer) override;
  void beforePeerLostLocked(int peer) override;
  bool peerLossWorthWarningLocked(int peer) override;
  void dropPeerLocked(int peer, const Status& why, const std::vector<int>& alsoEnded) override;
  void dropAllLocked(const Status& why) override;

  // LinkOwner, for the connections.
  // The local device goes into the message: with several NICs per host, which one saw the failure.
  void linkFailed(int peer, const std::string& detail) override {
    failPeerLocked(peer, fmt::format("{} (local RDMA device {} port {})", detail, res_->device.name, res_->device.port),
                   kLinkFailed);
  }
  void requestFailed(Request* req, const Status& why) override { fail(req, why); }
  void transportFailed(const Status& why) override { abortLocked(why); }
  void activate(Connection& c) override;
  bool aborted() const override { return aborted_; }

  // ibverbs_progress.cc
  bool datapathPassLocked();  // true when anything moved
  bool pollCqLocked();
  void handleCompletion(const ibv_wc& wc);
  void collectPostFailuresLocked();

  // ibverbs_zero_copy.cc
  const ibv_mr* regionHolding(const char* buf, size_t bytes) const;
  void completeDirectSendsTo(int peer);

  // ibverbs_transport.cc
  void queueOnLink(Connection& c, Request* req, char* buf, bool isSend);
  void enqueueSplitLocked(int peer, Request* req, char* buf, bool isSend);
  bool settleSplitsLocked();  // true when a caller's request completed
  void checkPeersLocked(bool force);
  void collectPeerPollFds(std::vector<pollfd>* fds, std::vector<int>* peers);
  void handlePeerEvents(const pollfd* fds, const std::vector<int>& peers);
  void drainChannelLocked();
  void drainBeforeTeardown(Deadline deadline);

  std::unique_ptr<IbResources> res_;
  // Buffers registered by the caller, each with its MR (declared after res_: deregistered first).
  struct UserRegion {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    MrPtr mr;
  };
  std::vector<UserRegion> regions_;
  const VerbsApi& api_;
  const int linksPerPeer_;
  const RingShape shape_;
  std::vector<Connection*> active_;
  std::vector<SplitRequest> splits_;  // in posting order; their parts are queued on the connections
  std::vector<pollfd> pollFds_;
  std::vector<int> pollPeers_;
  std::vector<ibv_wc> wcs_;
  unsigned unackedEvents_ = 0;
  int64_t lastPeerCheckNs_ = 0;
  // Posts the outbound QPs' writes when the device runs its requester in the poster's context
  // (soft-RoCE); null means post inline. Declared after res_: its thread ends before the QPs go.
  std::unique_ptr<WritePoster> poster_;
};

}  // namespace nshim::ib
