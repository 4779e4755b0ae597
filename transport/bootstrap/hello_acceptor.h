// Accepts connections on a listening socket and collects a fixed-size hello from each, several at
// a time, so that a silent, slow or hostile client can never stall the server (the bootstrap root,
// a rank accepting its peers). Connections that close early or stay silent too long are dropped
// with a warning. Used from a poll() loop: appendPollFds(), poll, then service().
#pragma once

#include <poll.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/bootstrap/socket.h"

namespace nshim {

class HelloAcceptor {
 public:
  static constexpr size_t kMaxHelloBytes = 64;
  static constexpr size_t kMaxPending = 1024;

  // `label` names the server in log lines ("bootstrap root 10.0.0.1:4000").
  using OnHello = std::function<void(Fd fd, const uint8_t* hello, const SocketAddress& from)>;
  HelloAcceptor(int listenFd, size_t helloBytes, double helloTimeoutSeconds, std::string label);

  // Adds the listening socket (while below kMaxPending) and every connection still sending.
  void appendPollFds(std::vector<pollfd>* fds) const;
  // Consumes the poll() results of the entries appendPollFds added (`fds` points at the first of
  // them, `count` of them), accepts new connections, reads hellos and drops expired connections.
  // Each complete hello goes to onHello, which takes ownership of the connection.
  Status service(const pollfd* fds, size_t count, const OnHello& onHello);

  // Closes every connection still sending its hello (after fork, in the child).
  void closeAll() { pending_.clear(); }

 private:
  struct Pending {
    Fd fd;
    SocketAddress from;
    std::array<uint8_t, kMaxHelloBytes> hello{};
    size_t got = 0;
    int64_t expiresNs = 0;
  };

  // Reads what is available; false when the connection is finished (complete hello or dropped).
  bool readHello(Pending& pending, const OnHello& onHello);

  int listenFd_;
  size_t helloBytes_;
  int64_t helloTimeoutNs_;
  std::string label_;
  std::vector<Pending> pending_;
};

}  // namespace nshim
