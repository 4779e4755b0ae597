// Multiplexed accept + fixed-size hello reader for bootstrap servers, with per-source and total
// caps on the connections waiting for their hello.
#include "transport/bootstrap/hello_acceptor.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/log.h"
#include "common/settings.h"

namespace nshim {

namespace {
// Connections accepted per service() call, so that a flood cannot keep the caller from its own work.
constexpr int kMaxAcceptsPerService = 4096;
// How long the listener is left alone when no descriptor is left and none can be freed.
constexpr int64_t kOutOfDescriptorsPauseNs = 100'000'000;
}  // namespace

double bootstrapHelloTimeoutSeconds() {
  static const double seconds = settingDouble(Setting::NCCLSHIM_BOOTSTRAP_HELLO_TIMEOUT);
  return seconds;
}

HelloAcceptor::HelloAcceptor(int listenFd, size_t helloBytes, double helloTimeoutSeconds, std::string label,
                             HelloAcceptorLimits limits)
    : listenFd_(listenFd), helloBytes_(std::min(helloBytes, kMaxHelloBytes)), helloTimeoutSeconds_(helloTimeoutSeconds),
      label_(std::move(label)), limits_{std::max<size_t>(limits.total, 1), std::max<size_t>(limits.perSource, 1)} {}

HelloAcceptor::~HelloAcceptor() { finish(); }

void HelloAcceptor::appendPollFds(std::vector<pollfd>* fds) const {
  for (const Pending& pending : pending_) fds->push_back(pollfd{pending.fd.get(), POLLIN, 0});
  if (nowNs() >= acceptPausedUntilNs_) fds->push_back(pollfd{listenFd_, POLLIN, 0});
}

void HelloAcceptor::noteStranger(const SocketAddress& from, StrangerReason reason, std::string_view detail) {
  tally_.note(from.host(), reason, detail);
}

bool HelloAcceptor::readHello(Pending& pending, const OnHello& onHello) {
  while (pending.got < helloBytes_) {
    ssize_t n = ::recv(pending.fd.get(), pending.hello.data() + pending.got, helloBytes_ - pending.got, MSG_DONTWAIT);
    if (n > 0) {
      pending.got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    noteStranger(pending.from, StrangerReason::kClosedEarly,
                 fmt::format("{} of {} bytes{}", pending.got, helloBytes_, n < 0 ? ", " + errnoText(errno) : ""));
    return false;
  }
  onHello(std::move(pending.fd), pending.hello.data(), pending.from);
  return false;
}

void HelloAcceptor::erase(size_t index) {
  auto count = waitingBySource_.find(pending_[index].source);
  if (count != waitingBySource_.end() && --count->second == 0) waitingBySource_.erase(count);
  pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(index));
}

bool HelloAcceptor::evictOldest(std::string source, const OnHello& onHello) {
  if (source.empty()) {
    size_t most = 0;
    for (const auto& [address, waiting] : waitingBySource_) {
      if (waiting > most) {
        most = waiting;
        source = address;
      }
    }
  }
  for (size_t i = 0; i < pending_.size();) {
    if (pending_[i].source != source) {
      ++i;
      continue;
    }
    // A hello that came since the last poll is served, never evicted.
    if (!readHello(pending_[i], onHello)) {
      erase(i);
      continue;
    }
    noteStranger(pending_[i].from, StrangerReason::kEvicted);
    erase(i);
    return true;
  }
  return false;
}

void HelloAcceptor::makeRoom(const std::string& source, const OnHello& onHello) {
  auto waitingFrom = [&] {
    auto found = waitingBySource_.find(source);
    return found == waitingBySource_.end() ? size_t{0} : found->second;
  };
  while (waitingFrom() >= limits_.perSource && evictOldest(source, onHello)) {}
  while (pending_.size() >= limits_.total && evictOldest("", onHello)) {}
}

Result<bool> HelloAcceptor::acceptOne(const OnHello& onHello) {
  SocketAddress from;
  bool outOfDescriptors = false;
  NS_ASSIGN_OR_RETURN(Fd fd, acceptPending(listenFd_, &from, &outOfDescriptors));
  if (outOfDescriptors) {
    // Free one descriptor by closing the oldest silent connection and try again; with none to
    // close, leave the listener alone for a moment rather than spin on it.
    if (evictOldest("", onHello)) return true;
    if (!warnedOutOfDescriptors_) {
      warnedOutOfDescriptors_ = true;
      NS_WARN("{}: out of file descriptors (ulimit -n); new connections wait in the listen queue", label_);
    }
    acceptPausedUntilNs_ = nowNs() + kOutOfDescriptorsPauseNs;
    return false;
  }
  if (!fd.valid()) return false;
  Pending pending;
  pending.fd = std::move(fd);
  pending.from = from;
  pending.source = from.host();
  pending.expiresNs = nowNs() + static_cast<int64_t>(helloTimeoutSeconds_ * 1e9);
  // Hellos usually arrive with the connection: try at once.
  if (!readHello(pending, onHello)) return true;
  makeRoom(pending.source, onHello);
  ++waitingBySource_[pending.source];
  pending_.push_back(std::move(pending));
  return true;
}

Status HelloAcceptor::service(const pollfd* fds, size_t count, const OnHello& onHello) {
  // Connections already waiting first: their poll entries come first, in pending_ order.
  size_t existing = std::min(count, pending_.size());
  std::vector<bool> keep(pending_.size(), true);
  for (size_t i = 0; i < existing; ++i) {
    if (fds[i].revents != 0) keep[i] = readHello(pending_[i], onHello);
  }
  int64_t now = nowNs();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (keep[i] && now >= pending_[i].expiresNs) {
      noteStranger(pending_[i].from, StrangerReason::kSilent);
      keep[i] = false;
    }
  }
  std::vector<Pending> kept;
  kept.reserve(pending_.size());
  waitingBySource_.clear();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (!keep[i]) continue;
    ++waitingBySource_[pending_[i].source];
    kept.push_back(std::move(pending_[i]));
  }
  pending_ = std::move(kept);

  // Then new connections, whatever poll said: accepting is non-blocking.
  if (now < acceptPausedUntilNs_) return Status::Ok();
  acceptPausedUntilNs_ = 0;
  for (int i = 0; i < kMaxAcceptsPerService; ++i) {
    NS_ASSIGN_OR_RETURN(bool accepted, acceptOne(onHello));
    if (!accepted) break;
  }
  return Status::Ok();
}

void HelloAcceptor::finish() {
  if (finished_) return;
  finished_ = true;
  for (const Pending& pending : pending_) noteStranger(pending.from, StrangerReason::kLeftOver);
  pending_.clear();
  waitingBySource_.clear();
  if (tally_.total() > 0) NS_WARN("{}: {}", label_, tally_.summary(helloTimeoutSeconds_));
}

void HelloAcceptor::closeAll() {
  pending_.clear();
  waitingBySource_.clear();
  tally_.clear();
  finished_ = true;
}

}  // namespace nshim
