// Accepts connections on a listening socket and collects a fixed-size hello from each, many at a
// time, so that silent, slow or hostile clients can never stall the server (the bootstrap root, a
// rank accepting its peers) nor keep a real rank out:
// - every connection is accepted at once and its hello read without blocking; the ranks send
//   theirs right after connecting, so it is usually there on accept and served at once;
// - a connection gets a short deadline for its hello (NCCLSHIM_BOOTSTRAP_HELLO_TIMEOUT, 5 s);
// - at most `perSource` connections of one source address, and `total` in all, wait for their
//   hello: a new one past a cap closes the oldest waiting one (of its source, or of the source
//   with the most), so that a flood from one address never holds the slots of real ranks;
// - connections that are not the job's are counted (StrangerTally) and reported in one warning
//   when the acceptor finishes, instead of one line each.
// Used from a poll() loop: appendPollFds(), poll, then service().
#pragma once

#include <poll.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/bootstrap/socket.h"
#include "transport/bootstrap/stranger_tally.h"

namespace nshim {

// The hello deadline of a connection: NCCLSHIM_BOOTSTRAP_HELLO_TIMEOUT seconds (default 5).
double bootstrapHelloTimeoutSeconds();

// How many connections may wait for their hello, in all and from one source address.
struct HelloAcceptorLimits {
  size_t total = 1024;
  size_t perSource = 256;
};

class HelloAcceptor {
 public:
  static constexpr size_t kMaxHelloBytes = 64;

  // `label` names the server in log lines ("bootstrap root 10.0.0.1:4000").
  using OnHello = std::function<void(Fd fd, const uint8_t* hello, const SocketAddress& from)>;
  HelloAcceptor(int listenFd, size_t helloBytes, double helloTimeoutSeconds, std::string label,
                HelloAcceptorLimits limits = HelloAcceptorLimits());
  // finish()es.
  ~HelloAcceptor();
  HelloAcceptor(const HelloAcceptor&) = delete;
  HelloAcceptor& operator=(const HelloAcceptor&) = delete;

  // Adds every connection still sending its hello, then the listening socket.
  void appendPollFds(std::vector<pollfd>* fds) const;
  // Consumes the poll() results of the entries appendPollFds added (`fds` points at the first of
  // them, `count` of them), reads hellos, drops expired connections and accepts new ones. Each
  // complete hello goes to onHello, which takes ownership of the connection and calls
  // noteStranger() when the hello is not of the job.
  Status service(const pollfd* fds, size_t count, const OnHello& onHello);

  // Counts a connection whose hello showed it is not the job's (see StrangerTally).
  void noteStranger(const SocketAddress& from, StrangerReason reason, std::string_view detail = {});
  size_t strangers() const { return tally_.total(); }
  size_t waiting() const { return pending_.size(); }

  // Closes the connections still waiting (counted as strangers) and logs the summary of the
  // strangers, once. The server calls it when its job is connected or has failed.
  void finish();
  // Closes every connection still waiting and forgets the tally, silently (after fork, in the child).
  void closeAll();

 private:
  struct Pending {
    Fd fd;
    SocketAddress from;
    std::string source;  // from.host()
    std::array<uint8_t, kMaxHelloBytes> hello{};
    size_t got = 0;
    int64_t expiresNs = 0;
  };

  // Reads what is available; false when the connection is finished (complete hello or dropped).
  bool readHello(Pending& pending, const OnHello& onHello);
  // Accepts one connection; false when none is waiting (or no descriptor is left for it).
  Result<bool> acceptOne(const OnHello& onHello);
  // Makes room for a connection from `source`: closes the oldest still silent one of that source
  // when it has perSource waiting, else of the largest source when `total` are waiting. A candidate
  // whose hello has come meanwhile is served instead, and the next one tried.
  void makeRoom(const std::string& source, const OnHello& onHello);
  // Closes the oldest silent connection of `source` ("" = of the source with the most waiting);
  // false when there is none.
  bool evictOldest(std::string source, const OnHello& onHello);
  void erase(size_t index);

  int listenFd_;
  size_t helloBytes_;
  double helloTimeoutSeconds_;
  std::string label_;
  HelloAcceptorLimits limits_;
  std::vector<Pending> pending_;  // oldest first
  std::map<std::string, size_t> waitingBySource_;
  StrangerTally tally_;
  int64_t acceptPausedUntilNs_ = 0;  // out of descriptors with nothing to close: listener left alone until then
  bool warnedOutOfDescriptors_ = false;
  bool finished_ = false;
};

}  // namespace nshim
