// Checks that the TCP and ibverbs transport tests share: exchange rounds in which every rank sends
// each size to every other rank (sends posted before their receives on odd rounds, after them on
// even ones) and checks every byte; the per-peer byte counters; a rank killed mid-transfer;
// abort() from another thread; and a transport connected to the other node's ranks only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "collectives/abort_on_error.h"
#include "common/clock.h"
#include "tests/transport/tcp_test_util.h"
#include "transport/core/transport.h"

namespace nshim::tcptest {

// Two nodes {0,1} and {2,3} of a 4-rank job: the ranks on `rank`'s node, and the others.
struct TwoNodes {
  std::vector<bool> sameNode, otherNode;
};
inline TwoNodes twoNodesOf(int rank) {
  TwoNodes nodes{std::vector<bool>(4), std::vector<bool>(4)};
  for (int r = 0; r < 4; ++r) {
    nodes.sameNode[r] = r / 2 == rank / 2;
    nodes.otherNode[r] = !nodes.sameNode[r];
  }
  return nodes;
}

// "" when `t` (connected to the other node's ranks only) refuses a send and a receive of its node's
// other rank as a pair it never connected.
inline std::string checkNodeMateRefused(Transport& t, const std::string& transportName) {
  const int mate = t.rank() ^ 1;
  uint8_t byte = 0;
  for (bool send : {true, false}) {
    Request refused;
    Status s = send ? t.postSend(mate, 1, &byte, 1, &refused) : t.postRecv(mate, 1, &byte, 1, &refused);
    if (s.ok() ||
        !contains(s.message(), fmt::format("rank {} has no {} connection to rank {}", t.rank(), transportName, mate))) {
      return fmt::format("a {} with the node's other rank: {}", send ? "send" : "receive", s.toString());
    }
  }
  return "";
}

// What the transport's counters must say once every exchange has completed.
struct ExpectedBytes {
  explicit ExpectedBytes(int nranks) : sent(nranks, 0), received(nranks, 0) {}
  std::vector<uint64_t> sent, received;
};

// `rounds` rounds over `sizes`; message numbers (for the patterns) continue from *msg. "" on success.
inline std::string exchangeRounds(Transport& t, std::span<const size_t> sizes, int rounds, Deadline deadline,
                                  ExpectedBytes& expected, int* msg) {
  const int rank = t.rank(), nranks = t.nranks(), numSizes = static_cast<int>(sizes.size());
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::vector<uint8_t>> sendBufs, recvBufs;
    std::vector<int> recvFrom, recvMsg;
    std::vector<std::unique_ptr<Request>> reqs;
    std::vector<Request*> list;
    AbortOnError guard(t);  // an early return must not leave requests queued on dead buffers
    for (int k = 0; k < numSizes; ++k, ++*msg) {
      for (int step = 1; step < nranks; ++step) {
        int to = (rank + step) % nranks, from = (rank - step + nranks) % nranks;
        size_t bytes = sizes[(k + round) % numSizes];
        sendBufs.push_back(pattern(bytes, rank, to, *msg));
        recvBufs.emplace_back(bytes, 0xEE);
        recvFrom.push_back(from);
        recvMsg.push_back(*msg);
        reqs.push_back(std::make_unique<Request>());
        reqs.push_back(std::make_unique<Request>());
        uint64_t tag = (uint64_t(round) << 20) | uint64_t(k);
        Request* s = reqs[reqs.size() - 2].get();
        Request* r = reqs.back().get();
        Status a = round % 2 ? t.postSend(to, tag, sendBufs.back().data(), bytes, s) : Status::Ok();
        Status b = t.postRecv(from, tag, recvBufs.back().data(), bytes, r);
        Status c = round % 2 ? Status::Ok() : t.postSend(to, tag, sendBufs.back().data(), bytes, s);
        for (const Status* st : {&a, &b, &c}) {
          if (!st->ok()) return st->toString();
        }
        list.push_back(s);
        list.push_back(r);
        expected.sent[to] += bytes;
        expected.received[from] += bytes;
      }
    }
    Status status = guard.completed(t.waitAll(list, deadline));
    if (!status.ok()) return status.toString();
    for (size_t i = 0; i < recvBufs.size(); ++i) {
      std::string bad = verify(recvBufs[i], recvFrom[i], rank, recvMsg[i]);
      if (!bad.empty()) return bad;
    }
  }
  return "";
}

// "" when every peer's byte counters equal `expected`.
inline std::string checkByteCounters(const Transport& t, const ExpectedBytes& expected) {
  for (int peer = 0; peer < t.nranks(); ++peer) {
    PeerBytes bytes = t.peerBytes(peer);
    if (bytes.sent != expected.sent[peer] || bytes.received != expected.received[peer]) {
      return fmt::format("byte counters for peer {}: sent {} received {}, expected {} and {}", peer, bytes.sent,
                         bytes.received, expected.sent[peer], expected.received[peer]);
    }
  }
  return "";
}

// One of three ranks (forked processes). Every iteration each rank exchanges with both others;
// rank 2 is the hub of transfers of `big` bytes (more than the transport buffers, so that they are
// in flight) and SIGKILLs itself in iteration `killAt`. Ranks 0 and 1 must fail within
// `maxWaitSeconds` with an error naming rank 2. The job's exit codes are {0, 0, 128 + SIGKILL}.
inline std::string killedHubJob(Transport& t, size_t big, int iterations, int killAt, double maxWaitSeconds) {
  const int rank = t.rank();
  std::vector<std::vector<char>> out(3, std::vector<char>(big, 'a')), in(3, std::vector<char>(big));
  for (int iteration = 0; iteration < iterations; ++iteration) {
    Request reqs[4];
    std::vector<Request*> list;
    AbortOnError guard(t);  // leaving with requests in flight aborts before they are freed
    int n = 0;
    for (int peer = 0; peer < 3; ++peer) {
      if (peer == rank) continue;
      size_t bytes = (rank == 2 || peer == 2) ? big : 4096;
      (void)t.postRecv(peer, iteration, in[peer].data(), bytes, &reqs[n]);
      list.push_back(&reqs[n++]);
      (void)t.postSend(peer, iteration, out[peer].data(), bytes, &reqs[n]);
      list.push_back(&reqs[n++]);
    }
    if (rank == 2 && iteration == killAt) {
      for (int i = 0; i < 50; ++i) (void)t.progress();
      raise(SIGKILL);
    }
    int64_t start = nowNs();
    Status status = guard.completed(t.waitAll(list, Deadline::after(20)));
    if (status.ok()) continue;
    double waited = (nowNs() - start) * 1e-9;
    if (status.message().find("connection to rank 2 lost") == std::string::npos || waited > maxWaitSeconds) {
      return fmt::format("after {:.1f} s: {}", waited, status.toString());
    }
    usleep(500000);  // let the other survivor see rank 2 go before we go too
    return "";
  }
  return "no failure seen";
}

// One of two ranks (run as threads): exchange `bytes` both ways, then wait on a receive that never
// matches while rank 0 aborts from a second thread after 0.3 s. Rank 0 must see its own reason,
// rank 1 the loss of rank 0 (`peerSees`), both within 5 s, and later posts must fail at once.
inline std::string abortFromAnotherThread(Transport& t, size_t bytes,
                                          const char* peerSees = "connection to rank 0 lost") {
  const int rank = t.rank();
  std::vector<uint8_t> out = pattern(bytes, rank, 1 - rank, 0), in(out.size());
  Request reqs[2];
  Request* both[2] = {&reqs[0], &reqs[1]};
  (void)t.postRecv(1 - rank, 4, in.data(), in.size(), &reqs[0]);
  (void)t.postSend(1 - rank, 4, out.data(), out.size(), &reqs[1]);
  Status exchanged = t.waitAll(both, Deadline::after(30));
  if (!exchanged.ok()) return exchanged.toString();
  if (std::string bad = verify(in, 1 - rank, rank, 0); !bad.empty()) return bad;
  char byte = 0;
  Request req;
  Status posted = t.postRecv(1 - rank, 5, &byte, 1, &req);  // never matched
  if (!posted.ok()) return posted.toString();
  std::thread aborter;
  if (rank == 0) {
    aborter = std::thread([&] {
      usleep(300000);
      t.abort("watchdog fired");
    });
  }
  int64_t start = nowNs();
  Status status = waitOne(t, &req, Deadline::after(20));
  double waited = (nowNs() - start) * 1e-9;
  if (aborter.joinable()) aborter.join();
  const char* expected = rank == 0 ? "watchdog fired" : peerSees;
  if (status.ok() || status.message().find(expected) == std::string::npos || waited > 5) {
    return fmt::format("after {:.1f} s: {}", waited, status.toString());
  }
  Status again = t.postSend(1 - rank, 6, &byte, 1, &req);  // later posts fail at once
  return again.ok() && req.done() && !req.status().ok() ? "" : "post after failure did not fail";
}

}  // namespace nshim::tcptest
