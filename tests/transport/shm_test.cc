// Tests of the shared-memory transport and of routing by node, with ranks as forked processes:
// every byte of many message sizes (larger than the ring too) in both posting orders, the byte
// counters, a tag mismatch named with both ranks, a peer that dies named within a second, nothing
// left in /dev/shm; and a communicator of two nodes x two ranks where each hop goes by the right
// transport (shared memory frames a message with 16 bytes, TCP with 24).
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/clock.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "transport/layered/node_routed_transport.h"
#include "transport/shm/shm_transport.h"

namespace nshim {
namespace {

using testing::runRanksInProcesses;
using namespace tcptest;

ShmOptions shmOptions() {
  ShmOptions o;
  o.timeoutSeconds = 20;
  o.ringBytes = 64 << 10;  // small, so that messages wrap and wait for room
  return o;
}

// Segment names this test's ids produce ("/ncclshim-<hash>-from-to") still in /dev/shm.
int leftoverSegments() {
  int n = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) n += std::string(e->d_name).rfind("ncclshim-", 0) == 0 ? 1 : 0;
    closedir(dir);
  }
  return n;
}

TEST_CASE("shared memory: every byte of many sizes between three ranks, counters exact", "[shm]") {
  const int before = leftoverSegments();
  UniqueId id = mustCreateId();
  const std::vector<size_t> sizes = {0, 1, 17, 4096, (64 << 10) + 5, 3 << 20};
  auto codes = runRanksInProcesses(
      3,
      [&](int rank) -> std::string {
        auto connected = connectShmTransport(id, rank, 3, {true, true, true}, shmOptions());
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        ExpectedBytes expected(3);
        int msg = 0;
        std::string bad = exchangeRounds(t, sizes, 4, Deadline::after(60), expected, &msg);
        if (!bad.empty()) return bad;
        bad = checkByteCounters(t, expected);
        if (!bad.empty()) return bad;
        return std::string(t.name()) == "shm" ? "" : "wrong name";
      },
      90);
  CHECK(codes == std::vector<int>{0, 0, 0});
  CHECK(leftoverSegments() == before);
}

TEST_CASE("shared memory: a tag mismatch names both ranks and both tags", "[shm]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectShmTransport(id, rank, 2, {true, true}, shmOptions());
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        std::vector<char> buf(100, 'x');
        Request req;
        Status s = rank == 0 ? t.postSend(1, 0x10, buf.data(), 100, &req) : t.postRecv(0, 0x11, buf.data(), 100, &req);
        if (s.ok()) s = waitOne(t, &req, Deadline::after(10));
        if (rank == 0) return "";  // the send may complete before rank 1 looks
        if (s.ok()) return "mismatch not detected";
        for (const char* part : {"rank 0", "rank 1", "tag 0x10", "tag 0x11"}) {
          if (!contains(s.message(), part)) return std::string("error lacks '") + part + "': " + s.message();
        }
        return "";
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("shared memory: a peer that dies is named within a second", "[shm]") {
  const int before = leftoverSegments();
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectShmTransport(id, rank, 2, {true, true}, shmOptions());
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        if (rank == 1) raise(SIGKILL);
        char byte = 0;
        Request req;
        const int64_t start = nowNs();
        Status s = t.postRecv(1, 1, &byte, 1, &req);
        if (s.ok()) s = waitOne(t, &req, Deadline::after(20));
        const double waited = (nowNs() - start) * 1e-9;
        if (s.ok() || !contains(s.message(), "rank 1") || !contains(s.message(), "lost") || waited > 1.0) {
          return fmt::format("after {:.2f} s: {}", waited, s.toString());
        }
        return "";
      },
      30);
  CHECK(codes == std::vector<int>{0, 128 + SIGKILL});
  CHECK(leftoverSegments() == before);
}

TEST_CASE("routing by node: peers of the node over shared memory, the others over TCP", "[shm]") {
  UniqueId id = mustCreateId();
  const std::vector<size_t> sizes = {1, 4096, (64 << 10) + 5, 1 << 20};
  auto codes = runRanksInProcesses(
      4,
      [&](int rank) -> std::string {
        const auto [sameNode, otherNode] = twoNodesOf(rank);
        auto net = connectTcpTransport(id, rank, 4, testOptions(), otherNode);  // as phynet: no TCP within a node
        if (!net.ok()) return net.status().toString();
        auto shm = connectShmTransport(id, rank, 4, sameNode, shmOptions());
        if (!shm.ok()) return shm.status().toString();
        auto t = createNodeRoutedTransport(std::move(shm).value(), std::move(net).value(), sameNode);
        ExpectedBytes expected(4);
        int msg = 0;
        std::string bad = exchangeRounds(*t, sizes, 3, Deadline::after(60), expected, &msg);
        if (!bad.empty()) return bad;
        bad = checkByteCounters(*t, expected);
        if (!bad.empty()) return bad;
        for (int peer = 0; peer < 4; ++peer) {
          if (peer == rank) continue;
          const PeerBytes b = t->peerBytes(peer);
          const uint64_t framing = b.sentMessages ? (b.sentWire - b.sent) / b.sentMessages : 0;
          if (framing != (sameNode[peer] ? 16u : 24u)) {
            return fmt::format("to rank {}: {} bytes of framing per message ({} messages): the wrong transport", peer,
                               framing, b.sentMessages);
          }
        }
        return "";
      },
      90);
  CHECK(codes == std::vector<int>{0, 0, 0, 0});
}

// Ranks as threads of this process: rank 0's watchdog thread aborts while both wait on receives
// that never match; rank 0 sees its reason, rank 1 that rank 0 aborted, both within 5 s.
TEST_CASE("shared memory: abort from another thread wakes the waiter and the peer notices", "[shm]") {
  UniqueId id = mustCreateId();
  auto results = testing::runRanksInThreads(2, [&](int rank) -> std::string {
    auto connected = connectShmTransport(id, rank, 2, {true, true}, shmOptions());
    if (!connected.ok()) return connected.status().toString();
    return abortFromAnotherThread(**connected, (1 << 20) + 3, "rank 0 on this host aborted");
  });
  CHECK(results == std::vector<std::string>{"", ""});
}

// A ring over two nodes where every rank waits for its receive alone before its send: a rank
// waiting on one transport must keep moving its sends on the other (a shared-memory send has no
// kernel buffer behind it), or the ring deadlocks. 4 MiB: more than the rings and socket buffers.
TEST_CASE("routing by node: a wait on one transport keeps the other's sends moving", "[shm]") {
  UniqueId id = mustCreateId();
  constexpr size_t kBytes = 4 << 20;
  auto codes = runRanksInProcesses(
      4,
      [&](int rank) -> std::string {
        const auto [sameNode, otherNode] = twoNodesOf(rank);
        auto net = connectTcpTransport(id, rank, 4, testOptions(), otherNode);
        if (!net.ok()) return net.status().toString();
        auto shm = connectShmTransport(id, rank, 4, sameNode, shmOptions());
        if (!shm.ok()) return shm.status().toString();
        auto t = createNodeRoutedTransport(std::move(shm).value(), std::move(net).value(), sameNode);
        const int next = (rank + 1) % 4, prev = (rank + 3) % 4;
        std::vector<uint8_t> out = pattern(kBytes, rank, next, 7), in(kBytes);
        Request send, recv;
        Status s = t->postSend(next, 7, out.data(), kBytes, &send);
        if (s.ok()) s = t->postRecv(prev, 7, in.data(), kBytes, &recv);
        if (s.ok()) s = waitOne(*t, &recv, Deadline::after(20));
        if (s.ok()) s = waitOne(*t, &send, Deadline::after(20));
        if (!s.ok()) return s.toString();
        return verify(in, prev, rank, 7);
      },
      60);
  CHECK(codes == std::vector<int>{0, 0, 0, 0});
}

}  // namespace
}  // namespace nshim
