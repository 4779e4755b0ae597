// NCCL's PXN for a trace's own send/recv, as NCCL's proxy thread does it: a relay per communicator
// (one per rank) with a thread that owns its own "relay transport" (shared memory to the rank's
// node-mates, the network to its rail peers: same local index on the other nodes) and forwards on
// its own, so a node-mate that relays need not take part in the batch.
//
// A relayed send s -> d (pxnRelayed) goes as a header {source, destination, bytes} and the payload
// from s's relay thread to R = pxnRelayOf(s, d) over the node; R's thread, which keeps a header
// receive posted from every node-mate, takes the payload into a buffer of its own and forwards
// header and payload to d over its NIC; d's thread, which keeps a header receive posted from every
// rail peer, delivers it to d's receives from s in issue order (straight into the receive's buffer
// when it is already waiting, else kept until it is posted). Messages of one pair stay in order on
// every link, so each source's transfers arrive in order.
//
// The main thread never calls the relay transport: it hands jobs to the thread through a queue and
// waits for them with the operation's deadline. A failed request (a peer that died or aborted)
// fails every job with the message that names it; destruction (or abort) stops the thread, aborts
// the relay transport so that peers notice, and joins. Bytes: the relay counts what it moved per
// peer (a forward is the relay's to the destination); phynet adds them to the report.
// Files: pxn_relay.cc (the main thread's side), pxn_relay_thread.cc (the thread),
// pxn_relay_state.h (what they share), pxn_relayed_point_to_point.h (a batch split between the
// relay and the direct path).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "collectives/collectives.h"
#include "common/clock.h"
#include "common/status.h"
#include "model/node_layout.h"
#include "transport/core/transport.h"

namespace nshim {

class PxnRelay {
 public:
  // `transport` reaches this rank's node-mates and rail peers in `nodes` (the communicator's
  // numbering); the thread starts here.
  PxnRelay(std::unique_ptr<Transport> transport, NodeLayout nodes);
  ~PxnRelay();
  PxnRelay(const PxnRelay&) = delete;
  PxnRelay& operator=(const PxnRelay&) = delete;

  // One job per relayed op (the caller checks pxnRelayed; sends' buffers are only read). The
  // buffers must stay alive until wait() returned.
  class Batch;
  std::unique_ptr<Batch> submit(std::span<const P2POp> ops);
  // Waits until every job of `batch` is done; on the deadline (or `fail`ing early: abortAndWait)
  // the relay is aborted and the jobs drained, so no job touches its buffer after this returns.
  Status wait(Batch& batch, Deadline deadline);
  // Ends the relay (every pending job fails with `reason`) and waits for `batch`'s jobs to stop.
  void abortAndWait(Batch& batch, const std::string& reason);
  // Stops the thread; pending and later jobs fail with `reason`. Idempotent.
  void abort(const std::string& reason);

  // Payload bytes the relay moved to and from `peer` (hops to relays, forwards, deliveries;
  // sentWire and sendLinks as the relay transport counts them, its headers included).
  PeerBytes peerBytes(int peer) const;

  struct Job;

 private:
  struct State;
  void loop();

  std::unique_ptr<State> state_;  // the thread's own (requests, buffers), and the shared queue
  std::thread thread_;            // last: started after state_, joined in the destructor
};

// The batch's jobs; owned by the caller between submit and wait.
class PxnRelay::Batch {
 public:
  ~Batch();
  std::vector<std::unique_ptr<Job>> jobs;
};

}  // namespace nshim
