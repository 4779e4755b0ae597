// The PXN relay's thread (pxn_relay.h): its own sends to relays, the forwards it makes for its
// node-mates, and the deliveries of relayed messages to this rank's receives.
#include "collectives/pxn_relay.h"

#include <algorithm>
#include <list>

#include "collectives/pxn_alltoall.h"

namespace nshim {
namespace {

// Sent ahead of every relayed payload, on both hops.
struct WireHeader {
  int32_t source = -1;
  int32_t destination = -1;
  uint64_t bytes = 0;
};

constexpr uint64_t kHeaderTag = 0x50584E5248445200ull;   // "PXNRHDR"
constexpr uint64_t kPayloadTag = 0x50584E5250415900ull;  // "PXNRPAY"
constexpr int64_t kMaxSleepUs = 1000;                     // the idle thread's longest nap

// A header receive kept posted from one node-mate (forwards) or rail peer (deliveries).
struct HeaderSlot {
  int peer = -1;
  bool fromMate = false;
  WireHeader header;
  Request req;
};

// A node-mate's message on its way to its destination through this rank.
struct Forward {
  int from = -1;
  WireHeader header;
  std::vector<char> data;
  Request in, outHeader, outPayload;
  bool received = false;
};

// A relayed message for this rank from `source`, into its receive's buffer or one of its own.
struct Incoming {
  int source = -1;
  int relay = -1;
  size_t bytes = 0;
  std::vector<char> owned;
  Request req;
  PxnRelay::Job* job = nullptr;
  bool arrived = false;
};

}  // namespace

struct PxnRelay::Job {
  bool isSend = false;
  int peer = -1;  // the destination of a send, the source of a receive
  char* buffer = nullptr;
  size_t bytes = 0;
  int relay = -1;
  WireHeader header;
  Request headerReq, payloadReq;
  // Under State::mutex.
  bool done = false;
  Status status;
};

struct PxnRelay::State {
  std::unique_ptr<Transport> transport;
  NodeLayout nodes;
  int rank = -1;

  // Shared with the main thread.
  mutable std::mutex mutex;
  std::condition_variable wake;  // the thread: a job or a stop
  std::condition_variable done;  // the main thread: jobs finished
  std::deque<Job*> queue;
  bool stop = false;
  std::string stopReason;
  Status failure;                 // once set, every job fails with it
  std::vector<PeerBytes> shared;  // the thread's counters as of its last pass

  // The thread's own.
  std::vector<std::unique_ptr<HeaderSlot>> slots;
  std::list<std::unique_ptr<Forward>> forwards;
  std::vector<std::deque<std::unique_ptr<Incoming>>> incoming;  // by source
  std::vector<std::deque<Job*>> waiting;                          // receives not yet met, by source
  std::list<Job*> sends;
  std::deque<Job*> fresh;  // taken from the queue, being started
  std::vector<PeerBytes> counted;
  std::vector<Job*> finished;  // to publish at the end of the pass

  Status postHeader(HeaderSlot& slot) {
    slot.req.reset();
    return transport->postRecv(slot.peer, kHeaderTag, &slot.header, sizeof(slot.header), &slot.req);
  }
  // Payload counters, shared at once: a transfer is counted before its receiver can see it.
  void count(int peer, uint64_t bytes, bool sent) {
    std::lock_guard<std::mutex> lock(mutex);
    for (std::vector<PeerBytes>* c : {&counted, &shared}) {
      if (sent) {
        (*c)[peer].sent += bytes;
        ++(*c)[peer].sentMessages;
      } else {
        (*c)[peer].received += bytes;
      }
    }
  }
  void finish(Job* job, Status status = Status::Ok()) {
    job->status = std::move(status);
    finished.push_back(job);
  }
  Status start(Job* job);
  Status meet(Incoming& in, Job* job);
  Status onHeader(HeaderSlot& slot);
  Status step(bool* moved);
  void publish();
  void shutDown(const Status& failure);
};

Status PxnRelay::State::start(Job* job) {
  if (job->isSend) {
    job->header = {rank, job->peer, job->bytes};
    count(job->relay, job->bytes, true);
    NS_RETURN_IF_ERROR(
        transport->postSend(job->relay, kHeaderTag, &job->header, sizeof(job->header), &job->headerReq));
    if (job->bytes > 0) {
      NS_RETURN_IF_ERROR(transport->postSend(job->relay, kPayloadTag, job->buffer, job->bytes, &job->payloadReq));
    }
    sends.push_back(job);
    return Status::Ok();
  }
  for (auto& in : incoming[job->peer]) {
    if (in->job == nullptr) return meet(*in, job);
  }
  waiting[job->peer].push_back(job);
  return Status::Ok();
}

// Pairs a relayed message with its receive (same source, issue order).
Status PxnRelay::State::meet(Incoming& in, Job* job) {
  if (in.bytes != job->bytes) {
    return NS_ERROR(Code::kRemoteError, "rank {}: PXN relayed message from rank {} (through rank {}) is {} bytes, "
                    "the receive expects {}", rank, in.source, in.relay, in.bytes, job->bytes);
  }
  in.job = job;
  return Status::Ok();
}

Status PxnRelay::State::onHeader(HeaderSlot& slot) {
  const WireHeader h = slot.header;
  const int n = nodes.nranks();
  const bool sane = h.source >= 0 && h.source < n && h.destination >= 0 && h.destination < n;
  if (slot.fromMate) {
    if (!sane || h.source != slot.peer || pxnFirstHopOf(nodes, h.source, h.destination) != rank) {
      return NS_ERROR(Code::kRemoteError, "rank {}: rank {} asked it to relay a message from {} to {} that is not "
                      "its to relay", rank, slot.peer, h.source, h.destination);
    }
    auto f = std::make_unique<Forward>();
    f->from = slot.peer;
    f->header = h;
    f->data.resize(h.bytes);
    if (h.bytes > 0) {
      NS_RETURN_IF_ERROR(transport->postRecv(slot.peer, kPayloadTag, f->data.data(), h.bytes, &f->in));
    } else {
      f->in.complete(Status::Ok());
    }
    forwards.push_back(std::move(f));
  } else {
    if (!sane || h.destination != rank || pxnFirstHopOf(nodes, h.source, rank) != slot.peer) {
      return NS_ERROR(Code::kRemoteError, "rank {}: rank {} relayed a message from {} to {} that is not its to relay",
                      rank, slot.peer, h.source, h.destination);
    }
    auto in = std::make_unique<Incoming>();
    in->source = h.source;
    in->relay = slot.peer;
    in->bytes = h.bytes;
    std::deque<Job*>& jobs = waiting[h.source];
    if (!jobs.empty()) {
      NS_RETURN_IF_ERROR(meet(*in, jobs.front()));
      jobs.pop_front();
    }
    char* target = in->job != nullptr ? in->job->buffer : nullptr;
    if (target == nullptr) {
      in->owned.resize(h.bytes);
      target = in->owned.data();
    }
    Incoming& kept = *incoming[h.source].emplace_back(std::move(in));  // kept first: a failure fails its job
    if (h.bytes > 0) {
      NS_RETURN_IF_ERROR(transport->postRecv(slot.peer, kPayloadTag, target, h.bytes, &kept.req));
    } else {
      kept.req.complete(Status::Ok());
    }
  }
  return postHeader(slot);  // after the payload's receive: the pair's next message is the next header
}

Status PxnRelay::State::step(bool* moved) {
  for (auto& slot : slots) {
    if (!slot->req.done()) continue;
    NS_RETURN_IF_ERROR(slot->req.status());
    NS_RETURN_IF_ERROR(onHeader(*slot));
    *moved = true;
  }
  for (auto it = forwards.begin(); it != forwards.end();) {
    Forward& f = **it;
    if (!f.received) {
      if (!f.in.done()) { ++it; continue; }
      NS_RETURN_IF_ERROR(f.in.status());
      f.received = true;
      *moved = true;
      count(f.from, f.header.bytes, false);
      const int to = f.header.destination;
      count(to, f.header.bytes, true);
      NS_RETURN_IF_ERROR(transport->postSend(to, kHeaderTag, &f.header, sizeof(f.header), &f.outHeader));
      if (f.header.bytes > 0) {
        NS_RETURN_IF_ERROR(transport->postSend(to, kPayloadTag, f.data.data(), f.header.bytes, &f.outPayload));
      } else {
        f.outPayload.complete(Status::Ok());
      }
    }
    if (!f.outHeader.done() || !f.outPayload.done()) { ++it; continue; }
    NS_RETURN_IF_ERROR(f.outHeader.status());
    NS_RETURN_IF_ERROR(f.outPayload.status());
    it = forwards.erase(it);
    *moved = true;
  }
  for (auto& list : incoming) {
    for (auto it = list.begin(); it != list.end();) {
      Incoming& in = **it;
      if (!in.arrived && in.req.done()) {
        NS_RETURN_IF_ERROR(in.req.status());
        in.arrived = true;
        count(in.relay, in.bytes, false);
        *moved = true;
      }
      if (!in.arrived || in.job == nullptr) { ++it; continue; }
      if (!in.owned.empty()) std::copy(in.owned.begin(), in.owned.end(), in.job->buffer);
      finish(in.job);
      it = list.erase(it);
    }
  }
  for (auto it = sends.begin(); it != sends.end();) {
    Job* job = *it;
    if (!job->headerReq.done() || (job->bytes > 0 && !job->payloadReq.done())) { ++it; continue; }
    NS_RETURN_IF_ERROR(job->headerReq.status());
    if (job->bytes > 0) NS_RETURN_IF_ERROR(job->payloadReq.status());
    finish(job);
    it = sends.erase(it);
    *moved = true;
  }
  return Status::Ok();
}

void PxnRelay::State::publish() {
  for (int p = 0; p < nodes.nranks(); ++p) {
    if (p == rank) continue;
    const PeerBytes t = transport->peerBytes(p);
    counted[p].sentWire = t.sentWire;
    counted[p].sendLinks = t.sendLinks;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (Job* job : finished) job->done = true;
    shared = counted;
  }
  finished.clear();
  done.notify_all();
}

// Stops: the transport is aborted first (so that no request still touches a job's buffer), then
// every job not done fails.
void PxnRelay::State::shutDown(const Status& why) {
  transport->abort(why.message());
  (void)transport->progress();
  publish();
  std::lock_guard<std::mutex> lock(mutex);
  failure = why;
  stop = true;
  auto fail = [&](Job* job) {
    if (job->done) return;
    job->status = why;
    job->done = true;
  };
  for (Job* job : sends) fail(job);
  for (auto& list : incoming) {
    for (auto& in : list) {
      if (in->job) fail(in->job);
    }
  }
  for (auto& jobs : waiting) {
    for (Job* job : jobs) fail(job);
  }
  for (Job* job : fresh) fail(job);
  for (Job* job : queue) fail(job);
  queue.clear();
  done.notify_all();
}

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

void PxnRelay::loop() {
  State& s = *state_;
  Status failure;
  for (auto& slot : s.slots) {
    failure = s.postHeader(*slot);
    if (!failure.ok()) break;
  }
  int64_t sleepUs = 0;
  std::deque<Job*>& fresh = s.fresh;
  while (failure.ok()) {
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      if (s.stop) {
        failure = NS_ERROR(Code::kRemoteError, "rank {}: PXN relay stopped: {}", s.rank, s.stopReason);
        break;
      }
      fresh.swap(s.queue);
    }
    bool moved = !fresh.empty();
    for (Job* job : fresh) {
      failure = s.start(job);
      if (!failure.ok()) break;
    }
    if (failure.ok()) fresh.clear();  // else shutDown fails those not started
    if (failure.ok()) failure = s.transport->progress();
    if (failure.ok()) failure = s.step(&moved);
    if (!failure.ok()) break;
    if (moved) {
      s.publish();
      sleepUs = 0;
      continue;
    }
    // Idle: yield a few passes, then nap (longer each time) until a job or a stop wakes it.
    sleepUs = sleepUs == 0 ? 1 : std::min<int64_t>(2 * sleepUs, kMaxSleepUs);
    if (sleepUs < 16) {
      std::this_thread::yield();
      continue;
    }
    std::unique_lock<std::mutex> lock(s.mutex);
    s.wake.wait_for(lock, std::chrono::microseconds(sleepUs), [&] { return s.stop || !s.queue.empty(); });
  }
  s.shutDown(failure);
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
    job->relay = job->isSend ? pxnFirstHopOf(state_->nodes, rank, op.peer) : pxnFirstHopOf(state_->nodes, op.peer, rank);
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
      state_->done.wait_for(lock, std::chrono::milliseconds(std::clamp<int64_t>(deadline.remainingNs() / 1000000, 1, 100)));
    }
  }
  if (late != nullptr) {
    const std::string what =
        late->isSend ? fmt::format("send to rank {} through relay rank {}", late->peer, late->relay)
                     : fmt::format("receive from rank {} relayed by rank {}", late->peer, late->relay);
    Status timeout = NS_ERROR(Code::kTimeout, "rank {}: PXN relayed {} not done before the deadline (waiting for "
                              "rank {})", state_->rank, what, late->relay);
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
