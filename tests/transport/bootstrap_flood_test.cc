// A job's bootstrap on a shared host: thousands of connections without the job's secret (silent,
// garbage, a wrong secret) at the root's and the ranks' listening ports neither stall nor break it,
// and they are reported in one summary line per listener.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log_capture.h"
#include "tests/catch.h"
#include "tests/transport/tcp_test_util.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/bootstrap_messages.h"
#include "transport/bootstrap/hello_acceptor.h"

namespace nshim {
namespace {

using namespace tcptest;

// Both ends of every connection live in this process: room for both.
bool raiseOpenFileLimit(rlim_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= wanted) return true;
  limit.rlim_cur = wanted;
  if (limit.rlim_max < wanted) limit.rlim_max = wanted;  // root in CI may raise the hard limit
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

// The TCP ports this process listens on (from /proc: the LISTEN sockets whose inodes are open here).
std::set<int> listeningPorts() {
  std::set<std::string> inodes;
  char link[256];
  for (int fd = 0; fd < 65536; ++fd) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
    if (n <= 0) continue;
    std::string target(link, static_cast<size_t>(n));
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::set<int> ports;
  std::ifstream table("/proc/self/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    char local[64], remote[64], state[8];
    unsigned long inode = 0;
    if (std::sscanf(line.c_str(), "%*s %63s %63s %7s %*s %*s %*s %*s %*s %lu", local, remote, state, &inode) != 4) {
      continue;
    }
    if (std::string(state) != "0A" || !inodes.count(std::to_string(inode))) continue;
    ports.insert(static_cast<int>(std::strtol(std::strchr(local, ':') + 1, nullptr, 16)));
  }
  return ports;
}

// Opens `count` connections to `to` from `from` (port 0) that never send anything.
void openSilent(const SocketAddress& to, const SocketAddress& from, int count, std::vector<Fd>* out) {
  std::string failed;
  for (int i = 0; i < count && failed.empty(); ++i) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) failed = "socket: " + errnoText(errno);
    else if (::bind(fd.get(), from.sockaddrPtr(), from.length()) != 0) failed = "bind: " + errnoText(errno);
    // A full listen queue leaves the connect in progress.
    else if (::connect(fd.get(), to.sockaddrPtr(), to.length()) != 0 && errno != EINPROGRESS) {
      failed = "connect: " + errnoText(errno);
    }
    out->push_back(std::move(fd));
  }
  INFO("opening " << count << " connections to " << to.toString() << " from " << from.host());
  REQUIRE(failed == "");
}

// A connection from `from` that sends `bytes` once connected.
Fd sendAtOnce(const SocketAddress& to, const SocketAddress& from, const std::vector<uint8_t>& bytes) {
  std::vector<Fd> one;
  openSilent(to, from, 1, &one);
  pollfd connected{one[0].get(), POLLOUT, 0};
  REQUIRE(::poll(&connected, 1, 5000) == 1);
  REQUIRE(writeAll(one[0].get(), bytes.data(), bytes.size(), Deadline::after(2), "a listener").ok());
  return std::move(one[0]);
}

std::vector<uint8_t> wrongSecretRootHello(Secret secret) {
  bootstrap::RootHello hello;
  hello.secret = secret;
  hello.secret[3] ^= 0x10;
  hello.rank = 3;
  hello.nranks = 4;
  hello.timeoutMs = 1000;
  std::vector<uint8_t> bytes(bootstrap::kRootHelloBytes);
  encode(hello, bytes.data());
  return bytes;
}

std::vector<uint8_t> wrongSecretPeerHello(Secret secret) {
  bootstrap::PeerHello hello{secret, 0, 1, 0, 2, 4};
  hello.secret[0] ^= 1;
  std::vector<uint8_t> bytes(bootstrap::kPeerHelloBytes);
  encode(hello, bytes.data());
  return bytes;
}

SocketAddress loopback(const char* host, int port = 0) { return *SocketAddress::parse(host, port); }

TEST_CASE("connections without the secret neither stall nor break the bootstrap", "[tcp][bootstrap_flood]") {
  REQUIRE(raiseOpenFileLimit(20000));
  LogCapture capture;
  UniqueId id = mustCreateId();
  auto info = decodeUniqueId(id);
  REQUIRE(info.ok());
  const SocketAddress local = loopback("127.0.0.1"), other = loopback("127.0.0.2");
  const std::vector<uint8_t> garbage(bootstrap::kRootHelloBytes, 0xAB);

  // At the root, before any rank: garbage and a wrong secret from 127.0.0.2, then more silent
  // connections than its listen queue (4096) holds, from the ranks' own address.
  std::vector<Fd> strangers;
  strangers.push_back(sendAtOnce(info->root, other, garbage));
  Fd forged = sendAtOnce(info->root, other, wrongSecretRootHello(info->secret));
  const int rootSilent = 5000;
  openSilent(info->root, local, rootSilent, &strangers);

  // Ranks 0-2 start and listen; while they wait for rank 3, 1500 silent connections, garbage and a
  // wrong secret go to each of their listening ports.
  const std::set<int> before = listeningPorts();
  std::vector<Status> results(4);
  std::vector<std::thread> ranks;
  auto runRank = [&](int rank) {
    BootstrapOptions options;
    options.socketsPerPeer = 2;
    options.timeoutSeconds = 8;
    auto sockets = bootstrapConnect(id, rank, 4, options);
    results[rank] = sockets.ok() ? Status::Ok() : sockets.status();
  };
  for (int rank = 0; rank < 3; ++rank) ranks.emplace_back(runRank, rank);
  std::set<int> rankPorts;
  for (Deadline wait = Deadline::after(10); rankPorts.size() < 3 && !wait.expired(); usleep(10000)) {
    rankPorts.clear();
    for (int port : listeningPorts()) {
      if (!before.count(port)) rankPorts.insert(port);
    }
  }
  REQUIRE(rankPorts.size() == 3);
  const int peerSilent = 1500;
  for (int port : rankPorts) {
    strangers.push_back(sendAtOnce(loopback("127.0.0.1", port), other, garbage));
    strangers.push_back(sendAtOnce(loopback("127.0.0.1", port), other, wrongSecretPeerHello(info->secret)));
    openSilent(loopback("127.0.0.1", port), local, peerSilent, &strangers);
  }

  int64_t start = nowNs();
  ranks.emplace_back(runRank, 3);
  for (std::thread& rank : ranks) rank.join();
  const double seconds = (nowNs() - start) * 1e-9;
  for (int rank = 0; rank < 4; ++rank) {
    INFO("rank " << rank);
    CHECK(results[rank].message() == "");
  }
  INFO("the last rank's bootstrap took " << seconds << " s");
  CHECK(seconds < 3);

  // The forged rank heard why it was refused.
  uint8_t header[bootstrap::kRootReplyBytes];
  REQUIRE(readAll(forged.get(), header, sizeof(header), Deadline::after(3), "the root").ok());
  bootstrap::RootReplyHeader reply;
  REQUIRE(decode(header, &reply));
  CHECK(reply.kind == bootstrap::kRootError);

  // One summary line per listener that served (the root, ranks 1 and 2), nothing per connection.
  std::vector<std::string> lines;
  for (Deadline wait = Deadline::after(5); !wait.expired(); usleep(10000)) {
    for (std::string& line : capture.take()) lines.push_back(std::move(line));
    bool rootDone = false;
    for (const std::string& line : lines) rootDone |= contains(line, "bootstrap root");
    if (rootDone) break;
  }
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  INFO(all);
  std::vector<std::string> warnings;
  for (const std::string& line : lines) {
    if (line.rfind("WARN", 0) == 0) warnings.push_back(line);
  }
  CHECK(warnings.size() == 3);
  const std::regex summary(
      "WARN (bootstrap root 127\\.0\\.0\\.1:\\d+|rank [12] bootstrap): ignored (\\d+) connections without the "
      "job's secret \\(from 127\\.0\\.0\\.1: (\\d+), 127\\.0\\.0\\.2: 2\\): .*1 not a bootstrap hello.*1 with a "
      "wrong secret.*");
  for (const std::string& line : warnings) {
    std::smatch match;
    INFO(line);
    REQUIRE(std::regex_match(line, match, summary));
    // Each of the silent connections that reached the listener before the job connected is counted.
    CHECK(std::stoi(match[2]) == std::stoi(match[3]) + 2);
    CHECK(std::stoi(match[3]) >= 1024);
  }
}

TEST_CASE("a rank that never arrives is still named when strangers flood the root", "[tcp][bootstrap_flood]") {
  REQUIRE(raiseOpenFileLimit(20000));
  LogCapture capture;
  UniqueId id = mustCreateId();
  auto info = decodeUniqueId(id);
  REQUIRE(info.ok());
  std::vector<Fd> strangers;
  openSilent(info->root, loopback("127.0.0.1"), 1500, &strangers);
  std::vector<Status> results(3);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 3; ++rank) {  // rank 3 never comes
    ranks.emplace_back([&, rank] {
      BootstrapOptions options;
      options.timeoutSeconds = 1.5;
      auto sockets = bootstrapConnect(id, rank, 4, options);
      results[rank] = sockets.ok() ? Status::Ok() : sockets.status();
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (const Status& result : results) {
    INFO(result.toString());
    CHECK(result.code() == Code::kTimeout);
    CHECK(contains(result.message(), "rank 3 of 4 never arrived"));
    CHECK(std::regex_search(result.message(), std::regex("meanwhile \\d+ connections without the job's secret")));
  }
}

}  // namespace
}  // namespace nshim
