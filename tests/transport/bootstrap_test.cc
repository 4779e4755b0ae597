// Tests of the bootstrap and its building blocks: unique id decoding of hostile input, socket
// helpers, missing, duplicate and misconfigured ranks, and strangers at the root.
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "tests/transport/tcp_test_util.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {
namespace {

using namespace tcptest;
using testing::runRanksInProcesses;

TEST_CASE("decodeUniqueId accepts a fresh id and rejects garbage", "[tcp]") {
  UniqueId id = mustCreateId();
  auto info = decodeUniqueId(id);
  REQUIRE(info.ok());
  CHECK(info->root.isLoopback());
  CHECK(info->root.port() != 0);

  UniqueId zero{};
  auto bad = decodeUniqueId(zero);
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.status().message(), "not an ncclshim unique id"));

  UniqueId corrupted = id;
  corrupted.bytes[10] ^= 0x40;  // inside the root address
  bad = decodeUniqueId(corrupted);
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.status().message(), "checksum"));

  UniqueId versioned = id;
  versioned.bytes[5] = 9;
  bad = decodeUniqueId(versioned);
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.status().message(), "version"));

  bad = decodeUniqueId(encodeUniqueId(UniqueIdInfo{SocketAddress(), info->secret}));  // valid checksum
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.status().message(), "address family"));

  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    UniqueId fuzzed = i % 2 ? id : UniqueId{};
    for (int flips = 0; flips < 1 + i % 5; ++flips) fuzzed.bytes[rng() % 128] = static_cast<char>(rng());
    (void)decodeUniqueId(fuzzed);  // must not crash or hang
  }
}

TEST_CASE("socket helpers: interfaces, IPv4 and IPv6 loopback, deadlines", "[tcp]") {
  auto lo = interfaceAddress("lo", AF_INET);
  REQUIRE(lo.ok());
  CHECK(lo->toString() == "127.0.0.1:0");
  CHECK(interfaceAddress("", AF_INET)->toString() == "127.0.0.1:0");
  auto notLo = interfaceAddress("^lo", AF_INET);
  CHECK((!notLo.ok() || !notLo->isLoopback()));
  auto missing = interfaceAddress("=nosuchif0", AF_INET);
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.status().message(), "nosuchif0"));

  for (const char* host : {"127.0.0.1", "::1"}) {
    INFO(host);
    auto address = SocketAddress::parse(host, 0);
    REQUIRE(address.ok());
    SocketAddress bound;
    auto listening = listenOn(*address, &bound);
    if (!listening.ok() && std::string(host) == "::1") continue;  // no IPv6 on this host
    REQUIRE(listening.ok());
    uint8_t wire[SocketAddress::kWireBytes];
    bound.toWire(wire);
    auto decoded = SocketAddress::fromWire(wire);
    REQUIRE(decoded.ok());
    CHECK(decoded->toString() == bound.toString());
    auto client = connectWithRetry(bound, Deadline::after(5));
    REQUIRE(client.ok());
    SocketAddress from;
    Result<Fd> server = Fd();
    for (int i = 0; i < 1000 && server.ok() && !server->valid(); ++i) {
      server = acceptPending(listening->get(), &from);
      usleep(1000);
    }
    REQUIRE((server.ok() && server->valid()));
    // Both ends are this host; a socket that is not connected has no peer to compare.
    CHECK(connectsSameHost(client->get()));
    CHECK(connectsSameHost(server->get()));
    CHECK_FALSE(connectsSameHost(listening->get()));
    REQUIRE(setSocketBuffer(client->get(), SocketBuffer::kSend, 64 << 10).ok());
    REQUIRE(setSocketBuffer(server->get(), SocketBuffer::kReceive, 96 << 10).ok());
    int sendBuffer = 0, receiveBuffer = 0;
    socklen_t length = sizeof(sendBuffer);
    REQUIRE(getsockopt(client->get(), SOL_SOCKET, SO_SNDBUF, &sendBuffer, &length) == 0);
    CHECK(sendBuffer == 2 * (64 << 10));  // Linux doubles the request for its own bookkeeping
    REQUIRE(getsockopt(server->get(), SOL_SOCKET, SO_RCVBUF, &receiveBuffer, &length) == 0);
    CHECK(receiveBuffer == 2 * (96 << 10));
    std::vector<char> out(3 << 20, 'z'), in(3 << 20);
    Status written;  // Catch2 assertions are not thread-safe: check after the join
    std::thread writer([&] { written = writeAll(client->get(), out.data(), out.size(), Deadline::after(10), "s"); });
    CHECK(readAll(server->get(), in.data(), in.size(), Deadline::after(10), "c").ok());
    writer.join();
    CHECK(written.ok());
    CHECK(in == out);
    char byte;
    int64_t start = nowNs();
    Status timedOut = readAll(server->get(), &byte, 1, Deadline::after(0.2), "the client");
    CHECK(timedOut.code() == Code::kTimeout);
    CHECK((nowNs() - start) * 1e-9 < 2);
    client->reset();
    CHECK(readAll(server->get(), &byte, 1, Deadline::after(2), "the client").code() == Code::kRemoteError);
  }
  // Nobody listens there (port 1 is privileged and unused): retried until the deadline.
  int64_t start = nowNs();
  auto refused = connectWithRetry(*SocketAddress::parse("127.0.0.1", 1), Deadline::after(0.3));
  CHECK_FALSE(refused.ok());
  CHECK((nowNs() - start) * 1e-9 < 2);
}

TEST_CASE("a socket buffer above the system limit is forced or refused and never capped", "[tcp]") {
  for (auto [which, option, sysctl] : {std::tuple{SocketBuffer::kSend, SO_SNDBUF, "net.core.wmem_max"},
                                       std::tuple{SocketBuffer::kReceive, SO_RCVBUF, "net.core.rmem_max"}}) {
    const long limit = socketBufferLimit(which);
    if (limit < 0 || limit > (1 << 29)) {
      WARN("skipped for " << sysctl << ": unreadable or too large to exceed");
      continue;
    }
    Fd socketFd(::socket(AF_INET, SOCK_STREAM, 0));
    REQUIRE(socketFd.valid());
    int before = 0, after = 0;
    socklen_t length = sizeof(before);
    REQUIRE(getsockopt(socketFd.get(), SOL_SOCKET, option, &before, &length) == 0);
    const int wanted = static_cast<int>(limit) + (64 << 10);
    Status set = setSocketBuffer(socketFd.get(), which, wanted);
    REQUIRE(getsockopt(socketFd.get(), SOL_SOCKET, option, &after, &length) == 0);
    INFO(sysctl << " = " << limit << ": " << set.message());
    if (set.ok()) {
      CHECK(after == 2 * wanted);  // forced past the limit (the tests run as root in CI)
    } else {
      CHECK(after == before);  // left alone, still autotuned
      CHECK(set.message().find("the socket keeps the kernel's autotuning") != std::string::npos);
    }
  }
}

TEST_CASE("ranks that disagree about sockets per peer fail clearly", "[tcp]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        auto connected = connectTcpTransport(id, rank, 2, testOptions(5, rank == 0 ? 2 : 3));
        if (connected.ok()) return "bootstrap succeeded";
        return contains(connected.status().message(), "NCCLSHIM_NSOCKS_PERPEER") ? "" : connected.status().toString();
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
}

// phynet's net transport under --intra-node shm: two nodes {0,1} and {2,3}; only the pairs on
// different nodes get sockets, messages between them arrive intact, and a message to a rank of the
// node is refused naming the pair.
TEST_CASE("a bootstrap given a set of peers connects only those", "[tcp]") {
  UniqueId socketsId = mustCreateId();
  UniqueId transportId = mustCreateId();
  auto codes = runRanksInProcesses(
      4,
      [&](int rank) -> std::string {
        const std::vector<bool> otherNode = twoNodesOf(rank).otherNode;
        BootstrapOptions options{3, 20, SocketInterface::fromEnvironment(), otherNode};
        auto sockets = bootstrapConnect(socketsId, rank, 4, options);
        if (!sockets.ok()) return sockets.status().toString();
        for (int peer = 0; peer < 4; ++peer) {
          const size_t want = otherNode[peer] ? 3 : 0;
          if (sockets->sockets[peer].size() != want) {
            return fmt::format("{} sockets to rank {}, expected {}", sockets->sockets[peer].size(), peer, want);
          }
          for (const Fd& fd : sockets->sockets[peer]) {
            if (!fd.valid()) return fmt::format("an invalid socket to rank {}", peer);
          }
        }
        auto t = connectTcpTransport(transportId, rank, 4, testOptions(), otherNode);
        if (!t.ok()) return t.status().toString();
        std::string refused = checkNodeMateRefused(**t, "TCP");
        if (!refused.empty()) return refused;
        Status s;
        // Rank p sends 100000 bytes to (p + 2) % 4 and 100001 to the other rank of that node.
        const std::vector<int> remote = {(rank + 2) % 4, (rank + 2) % 4 ^ 1};
        std::vector<std::vector<uint8_t>> out, in;
        std::vector<Request> requests(4);
        for (int p : remote) {
          out.push_back(pattern(p == (rank + 2) % 4 ? 100000 : 100001, rank, p, 5));
          in.emplace_back(rank == (p + 2) % 4 ? 100000 : 100001);
        }
        for (size_t i = 0; i < remote.size() && s.ok(); ++i) {
          s = (*t)->postSend(remote[i], 5, out[i].data(), out[i].size(), &requests[2 * i]);
          if (s.ok()) s = (*t)->postRecv(remote[i], 5, in[i].data(), in[i].size(), &requests[2 * i + 1]);
        }
        std::vector<Request*> all;
        for (Request& r : requests) all.push_back(&r);
        if (s.ok()) s = (*t)->waitAll(all, Deadline::after(20));
        if (!s.ok()) return s.toString();
        for (size_t i = 0; i < remote.size(); ++i) {
          std::string bad = verify(in[i], remote[i], rank, 5);
          if (!bad.empty()) return bad;
        }
        return "";
      },
      60);
  CHECK(codes == std::vector<int>(4, 0));

  BootstrapOptions twoEntries{1, 1, SocketInterface::fromEnvironment(), {true, false}};
  auto wrongSize = bootstrapConnect(mustCreateId(), 0, 4, twoEntries);
  REQUIRE_FALSE(wrongSize.ok());
  CHECK(contains(wrongSize.status().message(), "the set of peers to connect has 2 entries for 4 ranks"));
}

TEST_CASE("ranks that never arrive are named by the others", "[tcp]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      4,
      [&](int rank) -> std::string {
        if (rank >= 2) return "";  // ranks 2 and 3 never join
        int64_t start = nowNs();
        auto connected = connectTcpTransport(id, rank, 4, testOptions(3));
        double waited = (nowNs() - start) * 1e-9;
        if (connected.ok()) return "bootstrap succeeded without ranks 2 and 3";
        const std::string& message = connected.status().message();
        if (!contains(message, "ranks 2,3 of 4 never arrived") || connected.status().code() != Code::kTimeout) {
          return "unexpected error: " + connected.status().toString();
        }
        return waited < 7 ? "" : fmt::format("took {:.1f} s", waited);
      },
      30);
  CHECK(codes == std::vector<int>(4, 0));
}

TEST_CASE("a rank given to two processes is refused", "[tcp]") {
  UniqueId id = mustCreateId();
  // Which claimant of rank 0 the root meets first is up to the scheduler (process 1 starts 0.2 s
  // later, but a loaded machine can reorder them): the later one must hear "joined twice", the
  // earlier one "never arrived". Each process notes its outcome in shared memory.
  enum Outcome : int { kOther = 0, kJoinedTwice = 1, kNeverArrived = 2 };
  void* shared = mmap(nullptr, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  int* outcome = static_cast<int*>(shared);
  outcome[0] = outcome[1] = kOther;
  auto codes = runRanksInProcesses(
      2,
      [&](int process) -> std::string {
        if (process == 1) usleep(200000);
        auto connected = connectTcpTransport(id, 0, 2, testOptions(2));
        if (connected.ok()) return "bootstrap succeeded";
        const std::string& message = connected.status().message();
        if (contains(message, "rank 0 joined twice")) outcome[process] = kJoinedTwice;
        if (contains(message, "rank 1 of 2 never arrived")) outcome[process] = kNeverArrived;
        return outcome[process] != kOther ? "" : connected.status().toString();
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
  std::vector<int> seen = {outcome[0], outcome[1]};
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<int>{kJoinedTwice, kNeverArrived});
  munmap(shared, 2 * sizeof(int));
}

TEST_CASE("strangers at the bootstrap root are refused and the job completes", "[tcp]") {
  UniqueId id = mustCreateId();
  auto info = decodeUniqueId(id);
  REQUIRE(info.ok());
  // A forged id (wrong secret): the root answers that the id is not this job's.
  UniqueIdInfo forgedInfo = *info;
  forgedInfo.secret[0] ^= 1;
  int64_t start = nowNs();
  auto forged = connectTcpTransport(encodeUniqueId(forgedInfo), 0, 3, testOptions(5));
  REQUIRE_FALSE(forged.ok());
  CHECK(contains(forged.status().message(), "its secret is not this job's"));
  CHECK((nowNs() - start) * 1e-9 < 3);
  // Garbage of hello size: closed too.
  auto garbage = connectWithRetry(info->root, Deadline::after(5));
  REQUIRE(garbage.ok());
  std::vector<char> junk(56, '\xAB');
  REQUIRE(writeAll(garbage->get(), junk.data(), junk.size(), Deadline::after(2), "root").ok());
  char byte;
  CHECK(readAll(garbage->get(), &byte, 1, Deadline::after(3), "root").code() == Code::kRemoteError);
  // A silent connection stays open during the job and must not stall it.
  auto silent = connectWithRetry(info->root, Deadline::after(5));
  REQUIRE(silent.ok());

  auto codes = runRanksInProcesses(
      3,
      [&](int rank) -> std::string {
        auto connected = connectTcpTransport(id, rank, 3, testOptions(10));
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        std::vector<uint8_t> out = pattern(1000, rank, 0, 0), in[3];
        Request reqs[4];
        std::vector<Request*> list;
        for (int peer = 0, n = 0; peer < 3; ++peer) {
          if (peer == rank) continue;
          in[peer].resize(1000);
          (void)t.postRecv(peer, 1, in[peer].data(), 1000, &reqs[n]);
          (void)t.postSend(peer, 1, out.data(), 1000, &reqs[n + 1]);
          list.push_back(&reqs[n]);
          list.push_back(&reqs[n + 1]);
          n += 2;
        }
        Status status = t.waitAll(list, Deadline::after(10));
        if (!status.ok()) return status.toString();
        for (int peer = 0; peer < 3; ++peer) {
          if (peer != rank && in[peer] != pattern(1000, peer, 0, 0)) return fmt::format("bad data from {}", peer);
        }
        return "";
      },
      30);
  CHECK(codes == std::vector<int>{0, 0, 0});
  // The root has finished and closed the silent connection.
  CHECK(readAll(silent->get(), &byte, 1, Deadline::after(3), "root").code() == Code::kRemoteError);
}

}  // namespace
}  // namespace nshim
