// HelloAcceptor under strangers: silent connections are closed at their hello deadline, a source
// past its cap (or the acceptor past its total) loses its oldest silent connection, never another
// source's, a hello that came meanwhile is served rather than evicted, and one summary line counts
// them all.
#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/log_capture.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "transport/bootstrap/hello_acceptor.h"

namespace nshim {
namespace {

constexpr size_t kHelloBytes = 8;

SocketAddress address(const char* host, int port = 0) { return *SocketAddress::parse(host, port); }

// A connection from `from` to `to` (loopback, so connected at once).
Fd connectFrom(const SocketAddress& to, const SocketAddress& from) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  REQUIRE(::bind(fd.get(), from.sockaddrPtr(), from.length()) == 0);
  REQUIRE(::connect(fd.get(), to.sockaddrPtr(), to.length()) == 0);
  return fd;
}

// True when the acceptor closed its end of `fd`.
bool closedByServer(const Fd& fd) {
  pollfd p{fd.get(), POLLIN, 0};
  return ::poll(&p, 1, 10) == 1 && connectionEnded(fd.get());
}

struct Server {
  Server() {
    auto listening = listenOn(address("127.0.0.1"), &bound);
    REQUIRE(listening.ok());
    listen = std::move(*listening);
  }
  SocketAddress bound;
  Fd listen;
  std::vector<std::string> hellos;  // the hellos served, as text
  std::vector<Fd> served;

  HelloAcceptor::OnHello onHello() {
    return [this](Fd fd, const uint8_t* hello, const SocketAddress&) {
      hellos.emplace_back(reinterpret_cast<const char*>(hello), kHelloBytes);
      served.push_back(std::move(fd));
    };
  }
  // Polls and services for `seconds`.
  void pump(HelloAcceptor& acceptor, double seconds) {
    std::vector<pollfd> fds;
    for (Deadline until = Deadline::after(seconds); !until.expired();) {
      fds.clear();
      acceptor.appendPollFds(&fds);
      ::poll(fds.data(), fds.size(), until.remainingMs(20));
      REQUIRE(acceptor.service(fds.data(), fds.size(), onHello()).ok());
    }
  }
};

TEST_CASE("a hello acceptor keeps strangers from holding the slots of real hellos", "[tcp][bootstrap_flood]") {
  LogCapture capture;
  Server server;
  const SocketAddress a = address("127.0.0.1"), b = address("127.0.0.2"), c = address("127.0.0.3");
  HelloAcceptor acceptor(server.listen.get(), kHelloBytes, 1.0, "test listener", HelloAcceptorLimits{8, 4});

  std::vector<Fd> fromB, fromA;
  for (int i = 0; i < 3; ++i) fromB.push_back(connectFrom(server.bound, b));
  for (int i = 0; i < 6; ++i) fromA.push_back(connectFrom(server.bound, a));
  server.pump(acceptor, 0.05);
  // 127.0.0.1 is at its cap of 4: its two oldest are closed; 127.0.0.2 keeps its 3.
  CHECK(acceptor.waiting() == 7);
  CHECK(closedByServer(fromA[0]));
  CHECK(closedByServer(fromA[1]));
  for (const Fd& fd : fromB) CHECK_FALSE(closedByServer(fd));

  // Three from 127.0.0.3 take the acceptor past its total of 8: the largest source pays.
  std::vector<Fd> fromC;
  for (int i = 0; i < 3; ++i) fromC.push_back(connectFrom(server.bound, c));
  server.pump(acceptor, 0.05);
  CHECK(acceptor.waiting() == 8);
  CHECK(closedByServer(fromA[2]));
  CHECK(closedByServer(fromA[3]));
  for (const Fd& fd : fromB) CHECK_FALSE(closedByServer(fd));
  for (const Fd& fd : fromC) CHECK_FALSE(closedByServer(fd));

  // A rank whose hello comes after its connection was accepted: before poll reports it, a burst from
  // its source would evict it, but its hello is read and served instead.
  Fd rank = connectFrom(server.bound, a);
  server.pump(acceptor, 0.05);
  REQUIRE(server.hellos.empty());
  REQUIRE(::send(rank.get(), "rank-one", kHelloBytes, 0) == static_cast<ssize_t>(kHelloBytes));
  usleep(20000);
  for (int i = 0; i < 4; ++i) fromA.push_back(connectFrom(server.bound, a));
  usleep(20000);
  REQUIRE(acceptor.service(nullptr, 0, server.onHello()).ok());  // accepts, without reading the waiting ones
  CHECK(server.hellos == std::vector<std::string>{"rank-one"});
  // A hello that arrives with its connection is served at once, whatever the caps.
  Fd rank2 = connectFrom(server.bound, a);
  REQUIRE(::send(rank2.get(), "rank-two", kHelloBytes, 0) == static_cast<ssize_t>(kHelloBytes));
  server.pump(acceptor, 0.05);
  CHECK(server.hellos == std::vector<std::string>{"rank-one", "rank-two"});

  // At the hello deadline (1 s) every silent connection is closed.
  server.pump(acceptor, 1.1);
  CHECK(acceptor.waiting() == 0);
  for (const Fd& fd : fromB) CHECK(closedByServer(fd));
  for (const Fd& fd : fromC) CHECK(closedByServer(fd));

  acceptor.finish();
  std::vector<std::string> lines = capture.take();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "WARN test listener: ignored 16 connections without the job's secret (from 127.0.0.1: 10, 127.0.0.2: 3, "
        "127.0.0.3: 3): 8 sent no hello within 1 s, 8 closed to make room (too many connections waiting from "
        "their source or in all)");
}

// The highest descriptor open in this process.
int highestOpenFd() {
  int highest = -1;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) highest = std::max(highest, atoi(entry->d_name));
  closedir(dir);
  return highest;
}

TEST_CASE("a hello acceptor out of file descriptors closes silent connections to serve hellos",
          "[tcp][bootstrap_flood]") {
  // In a child: the descriptor limit is lowered for the whole process.
  auto codes = testing::runRanksInProcesses(
      1,
      [](int) -> std::string {
        Server server;
        const SocketAddress a = address("127.0.0.1");
        std::vector<Fd> silent;
        for (int i = 0; i < 20; ++i) silent.push_back(connectFrom(server.bound, a));
        Fd rank = connectFrom(server.bound, a);
        if (::send(rank.get(), "the-rank", kHelloBytes, 0) != static_cast<ssize_t>(kHelloBytes)) return "send failed";
        // Only two descriptors are left (the holes below the highest are filled): the acceptor must
        // close silent connections to reach the rank.
        const int highest = highestOpenFd();
        std::vector<Fd> fillers;
        for (Fd filler(::dup(2)); filler.valid() && filler.get() < highest; filler = Fd(::dup(2))) {
          fillers.push_back(std::move(filler));
        }
        rlimit limit{static_cast<rlim_t>(highest + 3), static_cast<rlim_t>(highest + 3)};
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return "setrlimit failed";
        HelloAcceptor acceptor(server.listen.get(), kHelloBytes, 10, "test listener");
        for (Deadline until = Deadline::after(5); server.hellos.empty() && !until.expired();) {
          std::vector<pollfd> fds;
          acceptor.appendPollFds(&fds);
          ::poll(fds.data(), fds.size(), 20);
          Status status = acceptor.service(fds.data(), fds.size(), server.onHello());
          if (!status.ok()) return status.toString();
        }
        if (server.hellos != std::vector<std::string>{"the-rank"}) return "the rank's hello was not served";
        return acceptor.strangers() > 0 ? "" : "no silent connection was closed to make room";
      },
      30);
  CHECK(codes == std::vector<int>{0});
}

}  // namespace
}  // namespace nshim
