// Multiplexed accept + fixed-size hello reader for bootstrap servers.
#include "transport/bootstrap/hello_acceptor.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/log.h"

namespace nshim {

HelloAcceptor::HelloAcceptor(int listenFd, size_t helloBytes, double helloTimeoutSeconds, std::string label)
    : listenFd_(listenFd),
      helloBytes_(std::min(helloBytes, kMaxHelloBytes)),
      helloTimeoutNs_(static_cast<int64_t>(helloTimeoutSeconds * 1e9)),
      label_(std::move(label)) {}

void HelloAcceptor::appendPollFds(std::vector<pollfd>* fds) const {
  for (const Pending& pending : pending_) fds->push_back(pollfd{pending.fd.get(), POLLIN, 0});
  if (pending_.size() < kMaxPending) fds->push_back(pollfd{listenFd_, POLLIN, 0});
}

bool HelloAcceptor::readHello(Pending& pending, const OnHello& onHello) {
  while (pending.got < helloBytes_) {
    ssize_t n = ::recv(pending.fd.get(), pending.hello.data() + pending.got, helloBytes_ - pending.got,
                       MSG_DONTWAIT);
    if (n > 0) {
      pending.got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    NS_WARN("{}: dropped a connection from {} that closed after {} of {} hello bytes{}", label_,
            pending.from.toString(), pending.got, helloBytes_, n < 0 ? ": " + errnoText(errno) : "");
    return false;
  }
  onHello(std::move(pending.fd), pending.hello.data(), pending.from);
  return false;
}

Status HelloAcceptor::service(const pollfd* fds, size_t count, const OnHello& onHello) {
  // Existing connections first: their poll entries come first, in pending_ order.
  size_t existing = std::min(count, pending_.size());
  std::vector<bool> keep(pending_.size(), true);
  for (size_t i = 0; i < existing; ++i) {
    if (fds[i].revents != 0) keep[i] = readHello(pending_[i], onHello);
  }
  int64_t now = nowNs();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (keep[i] && now >= pending_[i].expiresNs) {
      NS_WARN("{}: dropped a connection from {} that sent {} of {} hello bytes in {:.0f} s", label_,
              pending_[i].from.toString(), pending_[i].got, helloBytes_, helloTimeoutNs_ * 1e-9);
      keep[i] = false;
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (keep[i]) {
      if (kept != i) pending_[kept] = std::move(pending_[i]);
      ++kept;
    }
  }
  pending_.resize(kept);

  // Then new connections, whatever poll said: accepting is non-blocking.
  while (pending_.size() < kMaxPending) {
    SocketAddress from;
    NS_ASSIGN_OR_RETURN(Fd fd, acceptPending(listenFd_, &from));
    if (!fd.valid()) break;
    Pending pending;
    pending.fd = std::move(fd);
    pending.from = from;
    pending.expiresNs = nowNs() + helloTimeoutNs_;
    // Hellos usually arrive with the connection: try at once.
    if (readHello(pending, onHello)) pending_.push_back(std::move(pending));
  }
  return Status::Ok();
}

}  // namespace nshim
