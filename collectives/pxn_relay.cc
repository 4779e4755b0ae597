// The main thread's side of the PXN relay (pxn_relay.h): start and stop of the thread, jobs handed
// over through the queue and waited for with the operation's deadline, the byte counters.
#include "collectives/pxn_relay.h"

#include <algorithm>

#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_relay_state.h"

namespace nshim {

using namespace pxn_relay_internal;

PxnRelay::PxnRelay(std::unique_ptr<Transport> transport, NodeLayout nodes) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.rank = transport->rank();
  s.transport = std::move(transport);
  s.nodes = std::move(nodes);
  const int n = s.nodes.nranks();
  s.incoming.resize(n);
  s.waiting.resize(n);
  s.counted.resize(n);
  s.shared.resize(n);
  for (int p = 0; p < n; ++p) {
    if (p == s.rank) continue;
    const bool mate = s.nodes.nodeOf(p) == s.nodes.nodeOf(s.rank);
    const bool rail = !mate && s.nodes.localIndexOf(p) == s.nodes.localIndexOf(s.rank);
    if (!mate && !rail) continue;
    auto slot = std::make_unique<HeaderSlot>();
    slot->peer = p;
    slot->fromMate = mate;
    s.slots.push_back(std::move(slot));
  }
  thread_ = std::thread([this] { loop(); });
}

PxnRelay::~PxnRelay() {
  abort("the communicator is being destroyed");
  if (thread_.joinable()) thread_.join();
}

PxnRelay::Batch::~Batch() = default;

void PxnRelay::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->stop) return;
    state_->stop = true;
    state_->stopReason = reason;
  }
  state_->wake.notify_all();
}

std::unique_ptr<PxnRelay::Batch> PxnRelay::submit(std::span<const P2POp> ops) {
  auto batch = std::make_unique<Batch>();
  const int rank = state_->rank;
  for (const P2POp& op : ops) {
    auto job = std::make_unique<Job>();
    job->isSend = op.kind == P2POp::Kind::kSend;
    job->peer = op.peer;
    job->buffer = static_cast<char*>(op.buffer);
    job->bytes = op.bytes;
    job->relay =
        job->isSend ? pxnFirstHopOf(state_->nodes, rank, op.peer) : pxnFirstHopOf(state_->nodes, op.peer, rank);
    batch->jobs.push_back(std::move(job));
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    for (auto& job : batch->jobs) {
      if (state_->stop) {
        job->status = state_->failure.ok()
                          ? NS_ERROR(Code::kRemoteError, "rank {}: PXN relay stopped: {}", rank, state_->stopReason)
                          : state_->failure;
        job->done = true;
      } else {
        state_->queue.push_back(job.get());
      }
    }
  }
  state_->wake.notify_all();
  return batch;
}

Status PxnRelay::wait(Batch& batch, Deadline deadline) {
  const Job* late = nullptr;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    while (true) {
      late = nullptr;
      for (auto& job : batch.jobs) {
        if (!job->done) {
          late = job.get();
          break;
        }
      }
      if (late == nullptr || deadline.expired()) break;
      state_->done.wait_for(lock,
                            std::chrono::milliseconds(std::clamp<int64_t>(deadline.remainingNs() / 1000000, 1, 100)));
    }
  }
  if (late != nullptr) {
    const std::string what = late->isSend
                                 ? fmt::format("send to rank {} through relay rank {}", late->peer, late->relay)
                                 : fmt::format("receive from rank {} relayed by rank {}", late->peer, late->relay);
    Status timeout = NS_ERROR(Code::kTimeout,
                              "rank {}: PXN relayed {} not done before the deadline (waiting for "
                              "rank {})",
                              state_->rank, what, late->relay);
    abortAndWait(batch, timeout.message());
    return timeout;
  }
  for (auto& job : batch.jobs) {
    if (!job->status.ok()) return job->status;
  }
  return Status::Ok();
}

void PxnRelay::abortAndWait(Batch& batch, const std::string& reason) {
  abort(reason);
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->done.wait(lock, [&] {
    return std::all_of(batch.jobs.begin(), batch.jobs.end(), [](const auto& job) { return job->done; });
  });
}

PeerBytes PxnRelay::peerBytes(int peer) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (peer < 0 || peer >= static_cast<int>(state_->shared.size())) return PeerBytes{};
  return state_->shared[peer];
}

}  // namespace nshim
