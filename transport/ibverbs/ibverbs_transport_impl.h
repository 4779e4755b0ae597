// The ibverbs transport class, shared by its implementation files: ibverbs_transport.cc (the
// hooks of the network transports' shared core, transport/core/network_transport.h: queueing a
// post, sleeping on the completion channel, peer liveness, abort and teardown),
// ibverbs_datapath.cc (completion handling, fragments in and out of the rings, credits, post lists)
// and ibverbs_zero_copy.cc (registered buffers, offers, writes straight into the receiver's buffer).
// All connection state is guarded by the core's mutex; waiters drop it while they sleep in poll().
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

class IbverbsTransport final : public NetworkTransport {
 public:
  IbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks, int qpsPerPeer,
                   const RingShape& shape, int spinMicroseconds, bool postThread);
  ~IbverbsTransport() override;

  Status registerMemory(const void* buf, size_t bytes) override;
  Status deregisterMemory(const void* buf) override;

 private:
  Connection& connection(int peer, uint64_t seq) {
    return res_->connections[static_cast<size_t>(peer) * qpsPerPeer_ + seq % qpsPerPeer_];
  }

  // NetworkTransport hooks (ibverbs_transport.cc).
  bool connectedTo(int peer) const override { return res_->peerSockets[peer].valid(); }
  void enqueueLocked(int peer, Request* req, char* buf, bool isSend) override;
  bool progressLocked() override;  // a data path pass, then (every kPeerCheckNs) the peers' sockets
  bool sleepUntilNews(Deadline deadline) override;  // on the completion channel and the peers' sockets
  std::vector<int> otherEndedPeersLocked(int peer) override;
  void beforePeerLostLocked(int peer) override;
  bool peerLossWorthWarningLocked(int peer) override;
  void dropPeerLocked(int peer, const Status& why, const std::vector<int>& alsoEnded) override;
  void dropAllLocked(const Status& why) override;

  // ibverbs_datapath.cc
  bool datapathPassLocked();             // true when anything moved
  bool pollCqLocked();
  void handleCompletion(const ibv_wc& wc);
  void serviceLocked(Connection& c);     // reposts, receives, sends, credit, then a post list per QP
  void repostRecvs(Connection& c, QpLane& lane);
  void driveRecvs(Connection& c);
  void driveSends(Connection& c);
  bool sendQueueFull(const QpLane& lane) const;
  // A data write from `local` (lkey) to `remote` (rkey) with immediate `imm`, added to the outbound list.
  ibv_send_wr& addWrite(Connection& c, const char* local, uint32_t bytes, uint32_t lkey, uint64_t remote,
                        uint32_t rkey, uint32_t imm);
  void addCredit(Connection& c);
  void flush(Connection& c, QpLane& lane);
  void activate(Connection& c);
  bool fragmentMatches(Connection& c, PendingOp& op, const FragmentHeader& h);

  // ibverbs_zero_copy.cc
  enum class ZeroCopyChoice { kWritten, kUseRing, kWaitForOffer };
  const ibv_mr* regionHolding(const char* buf, size_t bytes) const;
  bool takeOffer(Connection& c, const char* landing, uint32_t bytes, uint32_t seq);
  void addOffers(Connection& c);
  ZeroCopyChoice tryDirectSend(Connection& c, PendingOp& op);
  void completeDirectSends(Connection& c);
  bool finishDirectRecv(Connection& c);
  void failDirectSends(Connection& c, const Status& why);
  void completeDirectSendsTo(int peer);

  // ibverbs_transport.cc
  void checkPeersLocked(bool force);
  void collectPeerPollFds(std::vector<pollfd>* fds, std::vector<int>* peers);
  void handlePeerEvents(const pollfd* fds, const std::vector<int>& peers);
  void drainChannelLocked();
  void drainBeforeTeardown(Deadline deadline);
  void collectPostFailuresLocked();

  std::unique_ptr<IbResources> res_;
  // Buffers registered by the caller, each with its MR (declared after res_: deregistered first).
  struct UserRegion {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    MrPtr mr;
  };
  std::vector<UserRegion> regions_;
  const VerbsApi& api_;
  const int qpsPerPeer_;
  const RingShape shape_;
  std::vector<Connection*> active_;
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
