// Tests of the ibverbs transport with ranks as forked processes on one RDMA device (soft-RoCE rxe0
// in the VM): exact delivery of many message sizes over one and two links per peer, with writes
// posted inline and by the posting thread, and over tiny rings (many fragments, credits wrapping),
// byte counters, connections to some peers only (beside shared memory), tag/length mismatches, a
// killed rank, abort from another thread. Every test skips when no RDMA device exists. The shared
// checks are in tests/transport/shared_transport_checks.h.
#include <signal.h>

#include <string>
#include <vector>

#include "common/clock.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "tests/transport/tcp_test_util.h"
#include "tests/verbs/verbs_test_util.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/layered/node_routed_transport.h"
#include "transport/shm/shm_transport.h"

namespace nshim {
namespace {

using tcptest::abortFromAnotherThread;
using tcptest::checkByteCounters;
using tcptest::exchangeRounds;
using tcptest::ExpectedBytes;
using tcptest::killedHubJob;
using tcptest::pattern;
using tcptest::verify;
using testing::runRanksInProcesses;
using verbstest::contains;
using verbstest::testOptions;

const size_t kSizes[] = {0, 1, 7, 4096, (256 << 10) + 3};

// Two exchange rounds (tests/transport/shared_transport_checks.h), then the per-peer counters.
std::string exchangeJob(const UniqueId& id, int rank, int nranks, const IbverbsOptions& options) {
  auto connected = connectIbverbsTransport(id, rank, nranks, options);
  if (!connected.ok()) return connected.status().toString();
  Transport& t = **connected;
  if (std::string(t.name()) != "ibverbs") return "wrong transport name";
  ExpectedBytes expected(nranks);
  int msg = 0;
  std::string error = exchangeRounds(t, kSizes, 2, Deadline::after(60), expected, &msg);
  return error.empty() ? checkByteCounters(t, expected) : error;
}

void runExchange(int nranks, const IbverbsOptions& options) {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = *id;
  auto codes = runRanksInProcesses(
      nranks, [&](int rank) { return exchangeJob(uid, rank, nranks, options); }, 120);
  INFO("nranks " << nranks << ", " << options.qpsPerPeer << " link(s) per peer, " << options.slots << " slots of "
                 << options.slotBytes << " bytes, post thread " << options.postThread
                 << " (rank errors are on stderr above)");
  CHECK(codes == std::vector<int>(nranks, 0));
}

TEST_CASE("ibverbs: a one-rank transport works and refuses itself as a peer", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto id = createUniqueId();
  REQUIRE(id.ok());
  auto transport = connectIbverbsTransport(*id, 0, 1, testOptions());
  REQUIRE(transport.ok());
  CHECK((*transport)->waitAll({}, Deadline::after(1)).ok());
  Request req;
  char byte = 0;
  CHECK_FALSE((*transport)->postSend(0, 0, &byte, 1, &req).ok());
}

// Both ways of posting the data writes: from the poster thread (soft-RoCE's default) and inline
// (what hardware NICs get).
TEST_CASE("ibverbs: ranks exchange messages of many sizes with every byte checked", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  for (int postThread : {1, 0}) {
    IbverbsOptions one = testOptions(1), two = testOptions(2);
    one.postThread = two.postThread = postThread;
    runExchange(2, one);
    runExchange(3, two);
  }
}

// phynet under --intra-node shm: two nodes {0,1} and {2,3}; ibverbs connects only the pairs on
// different nodes (no QP, memory or socket for the others, so ranks of one host need not reach each
// other's device), shared memory carries the rest, and every pair's bytes arrive intact.
TEST_CASE("ibverbs: connected to the other node's ranks only, beside shared memory", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = *id;
  auto codes = runRanksInProcesses(
      4,
      [&](int rank) -> std::string {
        const auto [sameNode, otherNode] = tcptest::twoNodesOf(rank);
        auto net = connectIbverbsTransport(uid, rank, 4, testOptions(2), otherNode);
        if (!net.ok()) return net.status().toString();
        std::string refused = tcptest::checkNodeMateRefused(**net, "ibverbs");
        if (!refused.empty()) return refused;
        ShmOptions shmOptions;
        shmOptions.timeoutSeconds = 30;
        auto shm = connectShmTransport(uid, rank, 4, sameNode, shmOptions);
        if (!shm.ok()) return shm.status().toString();
        auto t = createNodeRoutedTransport(std::move(shm).value(), std::move(net).value(), sameNode);
        ExpectedBytes expected(4);
        int msg = 0;
        std::string error = exchangeRounds(*t, kSizes, 2, Deadline::after(60), expected, &msg);
        return error.empty() ? checkByteCounters(*t, expected) : error;
      },
      120);
  CHECK(codes == std::vector<int>(4, 0));
}

TEST_CASE("ibverbs: tiny rings wrap their credits many times", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  for (int postThread : {1, 0}) {
    IbverbsOptions options = testOptions(2, 2, 1000);  // 1000-byte fragments, 2 in flight per link
    options.signalEvery = 3;
    options.postThread = postThread;
    runExchange(2, options);
  }
}

// Two ranks over 2 channel groups of 3 links: rank 0 sends messages of `sizes` to rank 1 on channels
// 0, 1, 0, ... (every byte checked on arrival); rank 0's counters must show the payload, one message
// per send, all 6 links carrying, and on the wire the payload plus one 32-byte fragment header per
// message or, with splitDataOnQps, per part (each fits one slot).
void channelGroupsJob(bool splitDataOnQps, const std::vector<size_t>& sizes) {
  IbverbsOptions options = testOptions(2);
  options.qpsPerConnection = 3;
  options.splitDataOnQps = splitDataOnQps;
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = *id;
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectIbverbsTransport(uid, rank, 2, options);
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        std::vector<std::vector<uint8_t>> bufs;
        for (size_t m = 0; m < sizes.size(); ++m) {
          bufs.push_back(rank == 0 ? pattern(sizes[m], 0, 1, static_cast<int>(m)) : std::vector<uint8_t>(sizes[m]));
        }
        std::vector<Request> reqs(sizes.size());
        for (size_t m = 0; m < sizes.size(); ++m) {
          reqs[m].channel = static_cast<int>(m % 2);
          Status posted = rank == 0 ? t.postSend(1, 0x60 + m, bufs[m].data(), sizes[m], &reqs[m])
                                    : t.postRecv(0, 0x60 + m, bufs[m].data(), sizes[m], &reqs[m]);
          if (!posted.ok()) return posted.toString();
        }
        uint64_t payload = 0;
        for (size_t m = 0; m < sizes.size(); ++m) {
          Status done = waitOne(t, &reqs[m], Deadline::after(30));
          if (!done.ok()) return done.toString();
          if (rank == 1) {
            std::string wrong = verify(bufs[m], 0, 1, static_cast<int>(m));
            if (!wrong.empty()) return wrong;
          }
          payload += sizes[m];
        }
        const PeerBytes bytes = t.peerBytes(1 - rank);
        if (rank == 1) return bytes.received == payload ? "" : "received " + std::to_string(bytes.received);
        const uint64_t wire = payload + 32 * (splitDataOnQps ? 3 : 1) * sizes.size();
        if (bytes.sent != payload || bytes.sentMessages != sizes.size() || bytes.sendLinks != 6 ||
            bytes.sentWire != wire) {
          return "sent " + std::to_string(bytes.sent) + " in " + std::to_string(bytes.sentMessages) + " messages on " +
                 std::to_string(bytes.sendLinks) + " links, " + std::to_string(bytes.sentWire) + " on the wire; want " +
                 std::to_string(payload) + ", " + std::to_string(sizes.size()) + ", 6, " + std::to_string(wire);
        }
        return "";
      },
      60);
  CHECK(codes == std::vector<int>{0, 0});
}

// NCCL_IB_QPS_PER_CONNECTION=3: a group's messages take its links in turn (12 messages: 6 per group).
TEST_CASE("ibverbs: a channel's messages go round robin over its QPs per connection", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  channelGroupsJob(false, std::vector<size_t>(12, 5000));
}

// NCCL_IB_SPLIT_DATA_ON_QPS=1: every message is cut over its group's three links in NCCL's parts
// (empty ones too: 0, 1 and 100 bytes leave two links a header-only part).
TEST_CASE("ibverbs: split data on QPs cuts every message over its group's links", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  channelGroupsJob(true, {0, 100, 5000, 384, (256 << 10) + 3, 1});
}

void mismatchJob(uint64_t recvTag, size_t recvBytes, const std::vector<std::string>& expected) {
  auto created = createUniqueId();
  REQUIRE(created.ok());
  UniqueId id = *created;
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectIbverbsTransport(id, rank, 2, testOptions());
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        std::vector<char> buf(100, 'x');
        Request req;
        if (rank == 0) {
          Status status = t.postSend(1, 0x10, buf.data(), 100, &req);
          if (status.ok()) status = waitOne(t, &req, Deadline::after(10));
          if (!status.ok()) return "send failed: " + status.toString();
          int64_t start = nowNs();  // rank 1 aborts on the mismatch: our next receive fails fast, naming it
          status = t.postRecv(1, 0x11, buf.data(), 1, &req);
          if (status.ok()) status = waitOne(t, &req, Deadline::after(10));
          if (status.ok() || !contains(status.message(), "rank 1") || nowNs() - start > 5e9) {
            return "expected a fast loss of rank 1, got: " + status.toString();
          }
          return "";
        }
        Status status = t.postRecv(0, recvTag, buf.data(), recvBytes, &req);
        if (status.ok()) status = waitOne(t, &req, Deadline::after(10));
        if (status.ok()) return "mismatch not detected";
        for (const std::string& part : expected) {
          if (!contains(status.message(), part)) return "error lacks '" + part + "': " + status.message();
        }
        return "";
      },
      60);
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("ibverbs: tag and length mismatches fail with both ranks and both values", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  mismatchJob(0x11, 100, {"rank 1", "rank 0", "tag 0x10", "tag 0x11"});
  mismatchJob(0x10, 64, {"rank 1", "rank 0", "100 bytes", "64 bytes"});
}

TEST_CASE("ibverbs: a rank killed mid-transfer is named by the survivors", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto created = createUniqueId();
  REQUIRE(created.ok());
  UniqueId id = *created;
  constexpr size_t kBig = 4 << 20;  // more than the rings hold: transfers are in flight when it dies
  auto codes = runRanksInProcesses(
      3,
      [&](int rank) -> std::string {
        auto connected = connectIbverbsTransport(id, rank, 3, testOptions());
        if (!connected.ok()) return connected.status().toString();
        return killedHubJob(**connected, kBig, 20, 1, 10);
      },
      90);
  CHECK(codes == std::vector<int>{0, 0, 128 + SIGKILL});
}

// Ranks as threads of this process.
TEST_CASE("ibverbs: abort from another thread wakes the waiter and the peer notices", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto created = createUniqueId();
  REQUIRE(created.ok());
  UniqueId id = *created;
  auto results = testing::runRanksInThreads(2, [&](int rank) -> std::string {
    auto connected = connectIbverbsTransport(id, rank, 2, testOptions());
    if (!connected.ok()) return connected.status().toString();
    return abortFromAnotherThread(**connected, (256 << 10) + 3);
  });
  CHECK(results == std::vector<std::string>{"", ""});
}

}  // namespace
}  // namespace nshim
