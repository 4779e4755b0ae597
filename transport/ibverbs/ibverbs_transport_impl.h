// The ibverbs transport class, shared by its two implementation files: ibverbs_transport.cc
// (posting, waiting, sleeping on the completion channel, peer liveness, abort and teardown) and
// ibverbs_datapath.cc (completion handling, fragments in and out of the rings, credits, post lists)
// and ibverbs_zero_copy.cc (registered buffers, offers, writes straight into the receiver's buffer).
// All connection state is guarded by one mutex; waiters drop it while they sleep in poll().
#pragma once

#include <poll.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/ibverbs/ibverbs_connection.h"
#include "transport/ibverbs/ibverbs_poster.h"

namespace nshim::ib {

class IbverbsTransport final : public Transport {
 public:
  IbverbsTransport(std::unique_ptr<IbResources> resources, int rank, int nranks, int qpsPerPeer,
                   const RingShape& shape, int spinMicroseconds, bool postThread);
  ~IbverbsTransport() override;

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const char* name() const override { return "ibverbs"; }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) override;
  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) override;
  Status waitAll(std::span<Request* const> requests, Deadline deadline) override;
  Status progress() override;
  PeerBytes peerBytes(int peer) const override;
  void abort(const std::string& reason) override;
  Status registerMemory(const void* buf, size_t bytes) override;
  Status deregisterMemory(const void* buf) override;

 private:
  Connection& connection(int peer, uint64_t seq) {
    return res_->connections[static_cast<size_t>(peer) * qpsPerPeer_ + seq % qpsPerPeer_];
  }
  Status post(int peer, uint64_t tag, char* buf, size_t bytes, Request* req, bool isSend);
  void fail(Request* req, const Status& status);
  void failQueue(OpRing<PendingOp>& queue, const Status& why);

  // ibverbs_datapath.cc
  bool progressLocked();                 // true when anything moved
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
  void failPeerLocked(int peer, const std::string& detail);
  void abortLocked(const Status& why);
  std::vector<int> peersGoneLocked(int except);
  bool sleepOnChannel(Deadline deadline);
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
  const int rank_;
  const int nranks_;
  const int qpsPerPeer_;
  const RingShape shape_;
  const int64_t spinNs_;
  std::mutex mutex_;
  std::vector<PeerLink> peers_;
  std::vector<Connection*> active_;
  std::vector<pollfd> pollFds_;
  std::vector<int> pollPeers_;
  std::vector<ibv_wc> wcs_;
  std::atomic<uint64_t> failures_{0};
  unsigned unackedEvents_ = 0;
  int64_t lastPeerCheckNs_ = 0;
  bool aborted_ = false;
  bool forgetRequests_ = false;  // set by the destructor: pending requests are dropped, not completed
  Status abortStatus_;
  // Posts the outbound QPs' writes when the device runs its requester in the poster's context
  // (soft-RoCE); null means post inline. Declared after res_: its thread ends before the QPs go.
  std::unique_ptr<WritePoster> poster_;
};

}  // namespace nshim::ib
