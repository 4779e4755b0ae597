// Tests of the TCP transport with ranks as forked processes: exact delivery of many message sizes
// in several patterns, byte counters, tag/length mismatches, a killed rank, abort from a thread.
#include <signal.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collectives/abort_on_error.h"
#include "common/clock.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "tests/transport/tcp_test_util.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {
namespace {

using namespace tcptest;
using testing::runRanksInProcesses;

const size_t kSizes[] = {0, 1, 7, 4096, (1 << 20) + 3};
constexpr int kNumSizes = 5;

// All-to-all rounds, then one-directional bursts per pair, checking every byte and the counters.
std::string exchangeJob(const UniqueId& id, int rank, int nranks, int socketsPerPeer) {
  auto connected = connectTcpTransport(id, rank, nranks, testOptions(20, socketsPerPeer));
  if (!connected.ok()) return connected.status().toString();
  Transport& t = **connected;
  ExpectedBytes expected(nranks);
  Deadline deadline = Deadline::after(30);
  int msg = 0;
  std::string error = exchangeRounds(t, kSizes, 3, deadline, expected, &msg);
  if (!error.empty()) return error;
  // Bursts: for every pair, the lower rank sends 12 messages, then the higher one answers with 12.
  for (int a = 0; a < nranks; ++a) {
    for (int b = a + 1; b < nranks; ++b) {
      for (int dir = 0; dir < 2; ++dir) {
        int src = dir ? b : a, dst = dir ? a : b;
        if (rank != src && rank != dst) continue;
        std::vector<std::vector<uint8_t>> bufs;
        std::vector<Request> reqs(12);
        std::vector<Request*> list;
        AbortOnError guard(t);
        for (int i = 0; i < 12; ++i) {
          size_t bytes = kSizes[i % kNumSizes];
          bufs.push_back(rank == src ? pattern(bytes, src, dst, 1000 + i) : std::vector<uint8_t>(bytes, 0));
          Status st = rank == src ? t.postSend(dst, 77, bufs.back().data(), bytes, &reqs[i])
                                  : t.postRecv(src, 77, bufs.back().data(), bytes, &reqs[i]);
          if (!st.ok()) return st.toString();
          list.push_back(&reqs[i]);
          (rank == src ? expected.sent[dst] : expected.received[src]) += bytes;
        }
        Status status = guard.completed(t.waitAll(list, deadline));
        if (!status.ok()) return status.toString();
        for (int i = 0; rank == dst && i < 12; ++i) {
          std::string bad = verify(bufs[i], src, dst, 1000 + i);
          if (!bad.empty()) return bad;
        }
      }
    }
  }
  return checkByteCounters(t, expected);
}

TEST_CASE("a one-rank TCP transport works", "[tcp]") {
  UniqueId id = mustCreateId();
  auto transport = connectTcpTransport(id, 0, 1, testOptions(5));
  REQUIRE(transport.ok());
  CHECK((*transport)->nranks() == 1);
  CHECK(std::string((*transport)->name()) == "tcp");
  CHECK((*transport)->waitAll({}, Deadline::after(1)).ok());
  Request req;
  char byte = 0;
  CHECK_FALSE((*transport)->postSend(1, 0, &byte, 1, &req).ok());
}

TEST_CASE("ranks exchange messages of many sizes with every byte checked", "[tcp]") {
  for (int nranks : {2, 3, 4}) {
    int socketsPerPeer = nranks == 3 ? 3 : 2;
    UniqueId id = mustCreateId();
    auto codes = runRanksInProcesses(
        nranks, [&](int rank) { return exchangeJob(id, rank, nranks, socketsPerPeer); }, 90);
    INFO("nranks " << nranks);
    CHECK(codes == std::vector<int>(nranks, 0));
  }
}

// Channels (Request::channel): rank 0 sends channel 1's message before channel 0's, rank 1 posts
// its receives the other way round; each channel is its own connection, matched on its own, so both
// arrive intact. Then four messages on channel 0 only. The connections that carried sends: 2 for
// the first peer pattern, and the receiver never sent.
std::string channelJob(const UniqueId& id, int rank) {
  auto connected = connectTcpTransport(id, rank, 2, testOptions(20, 2));
  if (!connected.ok()) return connected.status().toString();
  Transport& t = **connected;
  const Deadline deadline = Deadline::after(20);
  const size_t sizes[2] = {(1 << 20) + 3, 4096};  // per channel
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<Request> reqs(6);
  std::vector<Request*> list;
  AbortOnError guard(t);
  const int sendOrder[2] = {1, 0}, recvOrder[2] = {0, 1};
  for (int i = 0; i < 2; ++i) {
    const int channel = rank == 0 ? sendOrder[i] : recvOrder[i];
    bufs.push_back(rank == 0 ? pattern(sizes[channel], 0, 1, channel) : std::vector<uint8_t>(sizes[channel], 0));
    reqs[i].channel = channel;
    Status st = rank == 0 ? t.postSend(1, 5, bufs.back().data(), sizes[channel], &reqs[i])
                          : t.postRecv(0, 5, bufs.back().data(), sizes[channel], &reqs[i]);
    if (!st.ok()) return st.toString();
    list.push_back(&reqs[i]);
  }
  Status status = t.waitAll(list, deadline);
  if (!status.ok()) return status.toString();
  for (int i = 0; rank == 1 && i < 2; ++i) {
    std::string bad = verify(bufs[i], 0, 1, recvOrder[i]);
    if (!bad.empty()) return "channel " + std::to_string(recvOrder[i]) + ": " + bad;
  }
  if (rank == 0 && t.peerBytes(1).sendLinks != 2)
    return fmt::format("{} links carried sends, want 2", t.peerBytes(1).sendLinks);
  list.clear();
  std::vector<uint8_t> small(64, 1);
  for (int i = 2; i < 6; ++i) {
    reqs[i].channel = 0;
    Status st = rank == 1 ? t.postSend(0, 6, small.data(), small.size(), &reqs[i])
                          : t.postRecv(1, 6, small.data(), small.size(), &reqs[i]);
    if (!st.ok()) return st.toString();
    list.push_back(&reqs[i]);
  }
  status = guard.completed(t.waitAll(list, deadline));
  if (!status.ok()) return status.toString();
  if (rank == 1 && t.peerBytes(0).sendLinks != 1)
    return fmt::format("{} links carried sends, want 1", t.peerBytes(0).sendLinks);
  return "";
}

TEST_CASE("each channel is its own connection, matched on its own", "[tcp]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2, [&](int rank) { return channelJob(id, rank); }, 60);
  CHECK(codes == std::vector<int>{0, 0});
}

void mismatchJob(uint64_t recvTag, size_t recvBytes, const std::vector<std::string>& expected) {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectTcpTransport(id, rank, 2, testOptions());
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        std::vector<char> buf(100, 'x');
        Request req;
        auto sendOne = [&](int peer, uint64_t tag, size_t bytes) {
          Status posted = t.postSend(peer, tag, buf.data(), bytes, &req);
          return posted.ok() ? waitOne(t, &req, Deadline::after(10)) : posted;
        };
        auto recvOne = [&](int peer, uint64_t tag, size_t bytes) {
          Status posted = t.postRecv(peer, tag, buf.data(), bytes, &req);
          return posted.ok() ? waitOne(t, &req, Deadline::after(10)) : posted;
        };
        if (rank == 0) {
          Status status = sendOne(1, 0x10, 100);
          if (!status.ok()) return "send failed: " + status.toString();
          // Rank 1 aborts on the mismatch: the next receive must fail fast, naming rank 1.
          int64_t start = nowNs();
          status = recvOne(1, 0x11, 1);
          if (status.ok() || !contains(status.message(), "rank 1") || nowNs() - start > 5e9) {
            return "expected a fast loss of rank 1, got: " + status.toString();
          }
          return "";
        }
        Status status = recvOne(0, recvTag, recvBytes);
        if (status.ok()) return "mismatch not detected";
        for (const std::string& part : expected) {
          if (!contains(status.message(), part)) return "error lacks '" + part + "': " + status.message();
        }
        return "";
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("tag and length mismatches fail with both ranks and both values", "[tcp]") {
  mismatchJob(0x11, 100, {"rank 1", "rank 0", "tag 0x10", "tag 0x11"});
  mismatchJob(0x10, 64, {"rank 1", "rank 0", "100 bytes", "64 bytes"});
}

TEST_CASE("a rank killed mid-transfer is named by the survivors", "[tcp]") {
  UniqueId id = mustCreateId();
  constexpr size_t kBig = 16 << 20;  // more than the socket buffers hold: transfers are in flight
  auto codes = runRanksInProcesses(
      3,
      [&](int rank) -> std::string {
        auto connected = connectTcpTransport(id, rank, 3, testOptions());
        if (!connected.ok()) return connected.status().toString();
        return killedHubJob(**connected, kBig, 50, 3, 5);
      },
      60);
  CHECK(codes == std::vector<int>{0, 0, 128 + SIGKILL});
}

// Ranks as threads of this process (so that a thread sanitizer sees every thread involved).
TEST_CASE("abort from another thread wakes the waiter and the peer notices", "[tcp]") {
  UniqueId id = mustCreateId();
  auto results = testing::runRanksInThreads(2, [&](int rank) -> std::string {
    auto connected = connectTcpTransport(id, rank, 2, testOptions());
    if (!connected.ok()) return connected.status().toString();
    return abortFromAnotherThread(**connected, (1 << 20) + 3);
  });
  CHECK(results == std::vector<std::string>{"", ""});
}

}  // namespace
}  // namespace nshim
