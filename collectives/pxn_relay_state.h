// Internal to the PXN relay (pxn_relay.h): what its messages look like and the state its thread
// owns (requests, buffers of forwards and early arrivals) next to the queue it shares with the
// main thread. pxn_relay_thread.cc runs it; pxn_relay.cc is the main thread's side.
#pragma once

#include <deque>
#include <list>
#include <memory>
#include <vector>

#include "collectives/pxn_relay.h"

namespace nshim {
namespace pxn_relay_internal {

// Sent ahead of every relayed payload, on both hops.
struct WireHeader {
  int32_t source = -1;
  int32_t destination = -1;
  uint64_t bytes = 0;
};

constexpr uint64_t kHeaderTag = 0x50584E5248445200ull;   // "PXNRHDR"
constexpr uint64_t kPayloadTag = 0x50584E5250415900ull;  // "PXNRPAY"
constexpr int64_t kMaxSleepUs = 1000;                    // the idle thread's longest nap

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

}  // namespace pxn_relay_internal

struct PxnRelay::Job {
  bool isSend = false;
  int peer = -1;  // the destination of a send, the source of a receive
  char* buffer = nullptr;
  size_t bytes = 0;
  int relay = -1;
  pxn_relay_internal::WireHeader header;
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
  std::vector<std::unique_ptr<pxn_relay_internal::HeaderSlot>> slots;
  std::list<std::unique_ptr<pxn_relay_internal::Forward>> forwards;
  std::vector<std::deque<std::unique_ptr<pxn_relay_internal::Incoming>>> incoming;  // by source
  std::vector<std::deque<Job*>> waiting;                                            // receives not yet met, by source
  std::list<Job*> sends;
  std::deque<Job*> fresh;  // taken from the queue, being started
  std::vector<PeerBytes> counted;
  std::vector<Job*> finished;  // to publish at the end of the pass

  Status postHeader(pxn_relay_internal::HeaderSlot& slot) {
    slot.req.reset();
    return transport->postRecv(slot.peer, pxn_relay_internal::kHeaderTag, &slot.header, sizeof(slot.header), &slot.req);
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
  Status meet(pxn_relay_internal::Incoming& in, Job* job);
  Status onHeader(pxn_relay_internal::HeaderSlot& slot);
  Status step(bool* moved);
  void publish();
  void shutDown(const Status& failure);
};

}  // namespace nshim
