// The ibverbs transport's progress pass: poll the completion queue in batches (data arrivals,
// credits, offers, signaled send completions), hand each completion to its link, then service each
// active link (Connection::service, ibverbs_connection.cc) and drop the idle ones from the list.
#include <cstring>

#include "common/log.h"
#include "transport/ibverbs/ibverbs_transport_impl.h"

namespace nshim::ib {
namespace {

constexpr int kPollBatch = 32;
constexpr int kPollRounds = 8;  // at most 256 completions per pass, then service what they enabled

}  // namespace

bool IbverbsTransport::datapathPassLocked() {
  if (aborted_) return false;
  if (poster_) collectPostFailuresLocked();
  bool moved = pollCqLocked();
  for (size_t i = 0; i < active_.size() && !aborted_; ++i) active_[i]->service();
  size_t kept = 0;
  for (Connection* c : active_) {
    if (c->busy() && !aborted_) {
      active_[kept++] = c;
    } else {
      c->active = false;
    }
  }
  active_.resize(kept);
  return moved;
}

bool IbverbsTransport::pollCqLocked() {
  int total = 0;
  for (int round = 0; round < kPollRounds && !aborted_; ++round) {
    int n = ibv_poll_cq(res_->cq.get(), kPollBatch, wcs_.data());
    if (n < 0) {
      abortLocked(NS_ERROR(Code::kSystemError, "rank {}: ibv_poll_cq failed on {} ({})", rank_, res_->device.name, n));
      return false;
    }
    for (int i = 0; i < n; ++i) handleCompletion(wcs_[i]);
    total += n;
    if (n < kPollBatch) break;
  }
  std::atomic_thread_fence(std::memory_order_acquire);  // ring contents after their completions
  return total > 0;
}

void IbverbsTransport::handleCompletion(const ibv_wc& wc) {
  size_t id = static_cast<size_t>(wc.wr_id >> kWrIdShift);
  if (id >= res_->connections.size()) {
    abortLocked(NS_ERROR(Code::kInternal, "rank {}: completion with unknown wr_id {:#x}", rank_, wc.wr_id));
    return;
  }
  res_->connections[id].onCompletion(wc, linksPerPeer_);
}

void IbverbsTransport::collectPostFailuresLocked() {
  for (const WritePoster::Failure& f : poster_->takeFailures()) {
    const Connection& c = res_->connections[f.connection];
    failPeerLocked(c.peer,
                   fmt::format("ibv_post_send of {} work requests on the outbound QP of link {} failed: {}", f.count,
                               c.index, std::strerror(f.error)),
                   kLinkFailed);
  }
}

void IbverbsTransport::activate(Connection& c) {
  if (!c.active) {
    c.active = true;
    active_.push_back(&c);
  }
}

}  // namespace nshim::ib
