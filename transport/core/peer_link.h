// What the network transports (TCP, ibverbs) share: per peer, the sequence numbers that map the k-th
// send/receive to a connection, byte counters, failure state, and the checks and request set-up
// every post starts with; the request bookkeeping of their waitAll loops.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"
#include "transport/core/transport.h"

namespace nshim {

struct PeerLink {
  uint64_t sendSeq = 0;
  uint64_t recvSeq = 0;
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> receivedZeroCopy{0};  // of `received`, written straight into the caller's buffer
  std::atomic<uint64_t> sentMessages{0};      // sends posted
  std::atomic<uint64_t> sentWire{0};          // with the transport's framing (PeerBytes::sentWire)
  std::atomic<uint64_t> sendLinkMask{0};      // bit i: connection i carried a send (the first 64)
  std::vector<uint64_t> groupSendSeq;         // per group of links (nextLink with perGroup > 1)
  std::vector<uint64_t> groupRecvSeq;
  bool lost = false;
  Status lostStatus;

  // The connection (of `links`) the next send or receive of this pair travels on. The links make
  // links / perGroup groups of perGroup (NCCL's QPs per connection: ibverbs); the request's channel
  // picks its group (else the next group in round robin) and, within the group, the group's
  // messages take its links in turn, as NCCL deals a connection's requests over its QPs. Both ends
  // post a channel's messages in the same order, so the k-th send and the k-th receive meet on one
  // link. Counts the send and its connection.
  int nextLink(const Request& req, bool isSend, int links, int perGroup = 1) {
    const int groups = perGroup > 1 ? links / perGroup : links;
    int link = nextGroup(req, isSend, groups);
    if (perGroup > 1) {
      std::vector<uint64_t>& turns = isSend ? groupSendSeq : groupRecvSeq;
      if (turns.size() < static_cast<size_t>(groups)) turns.resize(static_cast<size_t>(groups), 0);
      link = link * perGroup + static_cast<int>(turns[static_cast<size_t>(link)]++ % static_cast<uint64_t>(perGroup));
    }
    if (isSend) countSend(link, 1);
    return link;
  }
  // NCCL_IB_SPLIT_DATA_ON_QPS=1: the first of the perGroup links the next message of this pair is
  // cut over (the group chosen as nextLink chooses it); counts the send and all of the group's links.
  int nextSplitGroup(const Request& req, bool isSend, int links, int perGroup) {
    const int first = nextGroup(req, isSend, links / perGroup) * perGroup;
    if (isSend) countSend(first, perGroup);
    return first;
  }
  uint32_t sendLinks() const {
    return static_cast<uint32_t>(__builtin_popcountll(sendLinkMask.load(std::memory_order_relaxed)));
  }

 private:
  // The request's channel picks the group (else the next in round robin).
  int nextGroup(const Request& req, bool isSend, int groups) {
    const uint64_t seq = isSend ? sendSeq++ : recvSeq++;
    return static_cast<int>(req.channel >= 0 ? static_cast<uint64_t>(req.channel) % groups : seq % groups);
  }
  void countSend(int firstLink, int links) {
    sentMessages.store(sentMessages.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    for (int link = firstLink; link < firstLink + links && link < 64; ++link) {
      sendLinkMask.fetch_or(uint64_t{1} << link, std::memory_order_relaxed);
    }
  }
};

// Single writer (under the transport mutex): a plain load/store keeps the hot path lock-free.
inline void addRelaxed(std::atomic<uint64_t>& counter, uint64_t value) {
  counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
}

// Checks a post's peer (another rank of the transport) and buffer (not null unless empty), then
// resets `req` and fills in peer, tag, bytes and direction.
inline Status startRequest(Request* req, int self, int nranks, int peer, uint64_t tag, const void* buf, size_t bytes,
                           bool isSend) {
  if (peer < 0 || peer >= nranks || peer == self) {
    return NS_ERROR(Code::kInvalidArgument, "peer {} out of range for rank {} of {}", peer, self, nranks);
  }
  if (buf == nullptr && bytes > 0) return NS_ERROR(Code::kInvalidArgument, "null buffer for {} bytes", bytes);
  req->reset();
  req->peer = peer;
  req->tag = tag;
  req->bytes = bytes;
  req->isSend = isSend;
  return Status::Ok();
}

// A message for a peer the transport was not connected to (one of the rank's own node, which
// phynet routes over shared memory).
inline Status notConnectedError(int self, int peer, const char* transport) {
  return NS_ERROR(Code::kInvalidUsage,
                  "rank {} has no {} connection to rank {}: that pair was left out when the "
                  "transport connected (ranks of one node meet over shared memory)",
                  self, transport, peer);
}

// The request bookkeeping of a waitAll loop, shared by the network transports. After each progress
// pass, settle() returns the error of a failed request (looked for whenever the transport's failure
// count has moved) or Ok once every request is done; nullopt while some are still pending.
class WaitScan {
 public:
  explicit WaitScan(std::span<Request* const> requests) : requests_(requests) {}

  std::optional<Status> settle(uint64_t failures) {
    if (failures != seenFailures_) {  // some request failed: is it one of ours?
      seenFailures_ = failures;
      for (size_t i = first_; i < requests_.size(); ++i) {
        if (requests_[i]->done() && !requests_[i]->status().ok()) return requests_[i]->status();
      }
    }
    while (first_ < requests_.size() && requests_[first_]->done()) {
      if (!requests_[first_]->status().ok()) return requests_[first_]->status();
      ++first_;
    }
    if (first_ == requests_.size()) return Status::Ok();
    return std::nullopt;
  }
  // The first request not yet done, once settle() has returned nullopt.
  const Request* pending() const { return first_ < requests_.size() ? requests_[first_] : nullptr; }

 private:
  std::span<Request* const> requests_;
  size_t first_ = 0;  // the requests before it are done
  uint64_t seenFailures_ = UINT64_MAX;
};

}  // namespace nshim
