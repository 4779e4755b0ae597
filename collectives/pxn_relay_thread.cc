// The PXN relay's thread (pxn_relay.h): its own sends to relays, the forwards it makes for its
// node-mates, and the deliveries of relayed messages to this rank's receives.
#include <algorithm>

#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_relay_state.h"

namespace nshim {

using namespace pxn_relay_internal;

Status PxnRelay::State::start(Job* job) {
  if (job->isSend) {
    job->header = {rank, job->peer, job->bytes};
    count(job->relay, job->bytes, true);
    NS_RETURN_IF_ERROR(transport->postSend(job->relay, kHeaderTag, &job->header, sizeof(job->header), &job->headerReq));
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
    return NS_ERROR(Code::kRemoteError,
                    "rank {}: PXN relayed message from rank {} (through rank {}) is {} bytes, "
                    "the receive expects {}",
                    rank, in.source, in.relay, in.bytes, job->bytes);
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
      return NS_ERROR(Code::kRemoteError,
                      "rank {}: rank {} asked it to relay a message from {} to {} that is not "
                      "its to relay",
                      rank, slot.peer, h.source, h.destination);
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
      if (!f.in.done()) {
        ++it;
        continue;
      }
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
    if (!f.outHeader.done() || !f.outPayload.done()) {
      ++it;
      continue;
    }
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
      if (!in.arrived || in.job == nullptr) {
        ++it;
        continue;
      }
      if (!in.owned.empty()) std::copy(in.owned.begin(), in.owned.end(), in.job->buffer);
      finish(in.job);
      it = list.erase(it);
    }
  }
  for (auto it = sends.begin(); it != sends.end();) {
    Job* job = *it;
    if (!job->headerReq.done() || (job->bytes > 0 && !job->payloadReq.done())) {
      ++it;
      continue;
    }
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

}  // namespace nshim
