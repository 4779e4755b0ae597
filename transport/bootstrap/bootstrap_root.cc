// The bootstrap root thread: collects one hello per rank (checking magic, secret, nranks, rank
// range and duplicates), then sends every rank the table of listen addresses; or, when ranks are
// missing at the deadline, sends those that came an error naming the missing ones. Roots live in a
// process-wide registry that stops and joins them at exit and cleans up after fork().
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "common/log.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/bootstrap_messages.h"
#include "transport/bootstrap/hello_acceptor.h"

namespace nshim {
namespace {

using namespace bootstrap;

static_assert(kRootHelloBytes <= HelloAcceptor::kMaxHelloBytes);
constexpr double kReplyTimeoutSeconds = 10;

class BootstrapRoot {
 public:
  BootstrapRoot(Fd listenFd, const SocketAddress& address, const Secret& secret)
      : listen_(std::move(listenFd)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        label_("bootstrap root " + address.toString()),
        acceptor_(listen_.get(), kRootHelloBytes, bootstrapHelloTimeoutSeconds(), label_), secret_(secret) {}

  ~BootstrapRoot() {
    stop_.store(true);
    uint64_t one = 1;
    if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof(one));
    if (thread_.joinable()) thread_.join();
  }

  Status start() {
    if (!wake_.valid()) return NS_ERROR(Code::kSystemError, "eventfd: {}", errnoText(errno));
    thread_ = std::thread([this] { run(); });
    return Status::Ok();
  }
  bool finished() const { return finished_.load(); }

  // fork() support: the thread holds mutex_ whenever it is not waiting in poll() (see run()).
  void lockForFork() { mutex_.lock(); }
  void unlockAfterFork() { mutex_.unlock(); }
  void closeEverythingInChild() {
    acceptor_.closeAll();
    arrived_.clear();
    listen_.reset();
    wake_.reset();
  }

 private:
  // The thread holds mutex_ at all times but in poll(): whatever it does that may allocate
  // (descriptors, hellos, the table, warnings) is then never under way at a fork(), whose handler
  // takes mutex_ first. A child would otherwise inherit an allocator lock held by this thread
  // (GCC 12's libasan does not guard its allocator across fork) and hang at its next allocation.
  void run() {
    std::vector<pollfd> fds;
    std::vector<int> arrivedRanks;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_.load()) {
      fds.clear();
      arrivedRanks.clear();
      fds.push_back(pollfd{wake_.get(), POLLIN, 0});
      for (int rank = 0; rank < nranks_; ++rank) {
        if (!arrived_[rank].valid()) continue;
        fds.push_back(pollfd{arrived_[rank].get(), POLLIN, 0});
        arrivedRanks.push_back(rank);
      }
      size_t acceptorFirst = fds.size();
      acceptor_.appendPollFds(&fds);
      int timeoutMs = 1000;
      if (nranks_ > 0)
        timeoutMs = std::min<int64_t>(timeoutMs, std::max<int64_t>(0, (deadlineNs_ - nowNs()) / 1000000 + 1));
      lock.unlock();
      ::poll(fds.data(), fds.size(), timeoutMs);
      lock.lock();
      if (stop_.load()) break;
      for (size_t i = 0; i < arrivedRanks.size(); ++i) {
        if (fds[1 + i].revents != 0) dropArrived(arrivedRanks[i]);
      }
      Status status = acceptor_.service(
          fds.data() + acceptorFirst, fds.size() - acceptorFirst,
          [this](Fd fd, const uint8_t* hello, const SocketAddress& from) { onHello(std::move(fd), hello, from); });
      if (!status.ok()) NS_WARN("{}: {}", label_, status.message());
      if (nranks_ > 0 && arrivedCount_ == nranks_) {
        sendTable();
        break;
      }
      if (nranks_ > 0 && nowNs() >= deadlineNs_) {
        sendMissing();
        break;
      }
    }
    acceptor_.finish();
    arrived_.clear();
    listen_.reset();
    finished_.store(true);
  }

  void onHello(Fd fd, const uint8_t* bytes, const SocketAddress& from) {
    RootHello hello;
    std::string why;
    if (!decode(bytes, &hello, &why)) return acceptor_.noteStranger(from, StrangerReason::kNotBootstrap, why);
    if (!secretsEqual(hello.secret.data(), secret_.data())) {
      // Answered, so that a rank given a stale id or another job's hears why.
      acceptor_.noteStranger(from, StrangerReason::kWrongSecret, fmt::format("claiming rank {}", hello.rank));
      sendError(fd.get(), Code::kInvalidArgument,
                fmt::format("the {} refused the unique id: its secret is not this job's (an id of another job, or "
                            "a stale one?)",
                            label_));
      return;
    }
    if (hello.nranks < 1 || hello.nranks > kMaxRanks) {
      return reject(std::move(fd), fmt::format("nranks {} is out of range [1, {}]", hello.nranks, kMaxRanks));
    }
    if (nranks_ == 0) {
      nranks_ = static_cast<int>(hello.nranks);
      arrived_.resize(nranks_);
      addresses_.assign(static_cast<size_t>(nranks_) * SocketAddress::kWireBytes, 0);
      timeoutSeconds_ = std::max(hello.timeoutMs, 1u) * 1e-3;
      deadlineNs_ = nowNs() + static_cast<int64_t>(timeoutSeconds_ * 1e9);
    }
    if (static_cast<int>(hello.nranks) != nranks_) {
      return reject(std::move(fd), fmt::format("rank {} joined with nranks={}, but earlier ranks said nranks={}",
                                               hello.rank, hello.nranks, nranks_));
    }
    if (hello.rank >= hello.nranks) {
      return reject(std::move(fd), fmt::format("rank {} is out of range for {} ranks", hello.rank, nranks_));
    }
    if (arrived_[hello.rank].valid()) {
      return reject(std::move(fd),
                    fmt::format("rank {} joined twice (was one rank given to two processes?)", hello.rank));
    }
    if (!SocketAddress::fromWire(hello.listen).ok()) {
      return reject(std::move(fd), fmt::format("rank {} sent an invalid listen address", hello.rank));
    }
    NS_INFO("{}: rank {} of {} arrived from {}", label_, hello.rank, nranks_, from.toString());
    std::copy(hello.listen, hello.listen + SocketAddress::kWireBytes,
              addresses_.begin() + static_cast<ptrdiff_t>(hello.rank * SocketAddress::kWireBytes));
    arrived_[hello.rank] = std::move(fd);
    ++arrivedCount_;
  }

  // A rank waiting for the table must stay silent: data or end of stream means it is gone.
  void dropArrived(int rank) {
    NS_WARN("{}: rank {} disconnected before all ranks arrived; waiting for it to come back", label_, rank);
    arrived_[rank].reset();
    --arrivedCount_;
  }

  // Best effort: the socket buffer of a fresh connection takes a short error at once.
  void sendError(int fd, Code code, const std::string& text) {
    std::string message = text.substr(0, kMaxErrorText);
    std::vector<uint8_t> frame(kRootReplyBytes + message.size());
    encode(RootReplyHeader{kRootError, static_cast<uint16_t>(code), static_cast<uint32_t>(nranks_),
                           static_cast<uint32_t>(message.size())},
           frame.data());
    std::copy(message.begin(), message.end(), frame.begin() + kRootReplyBytes);
    Status status = writeAll(fd, frame.data(), frame.size(), Deadline::after(kReplyTimeoutSeconds), "a rank");
    if (!status.ok()) NS_WARN("{}: could not send an error to a rank: {}", label_, status.message());
  }

  void reject(Fd fd, const std::string& why) {
    NS_WARN("{}: refused a rank: {}", label_, why);
    sendError(fd.get(), Code::kInvalidArgument, why);
  }

  void sendTable() {
    std::vector<uint8_t> frame(kRootReplyBytes + addresses_.size());
    encode(RootReplyHeader{kRootTable, 0, static_cast<uint32_t>(nranks_), static_cast<uint32_t>(addresses_.size())},
           frame.data());
    std::copy(addresses_.begin(), addresses_.end(), frame.begin() + kRootReplyBytes);
    Deadline deadline = Deadline::after(kReplyTimeoutSeconds);
    for (int rank = 0; rank < nranks_; ++rank) {
      Status status = writeAll(arrived_[rank].get(), frame.data(), frame.size(), deadline, "a rank");
      if (!status.ok()) NS_WARN("{}: sending the table to rank {}: {}", label_, rank, status.message());
    }
    NS_INFO("{}: all {} ranks arrived; table sent", label_, nranks_);
  }

  void sendMissing() {
    std::vector<int> missing;
    for (int rank = 0; rank < nranks_; ++rank) {
      if (!arrived_[rank].valid()) missing.push_back(rank);
    }
    std::string text = fmt::format(
        "{} {} of {} never arrived at the {} within {:g} s (did a rank fail before "
        "joining, or did the launcher start fewer ranks?)",
        missing.size() == 1 ? "rank" : "ranks", formatRankList(missing), nranks_, label_, timeoutSeconds_);
    if (acceptor_.strangers() + acceptor_.waiting() > 0) {
      text += fmt::format("; meanwhile {} connections without the job's secret came and were ignored",
                          acceptor_.strangers() + acceptor_.waiting());
    }
    NS_WARN("{}", text);
    for (int rank = 0; rank < nranks_; ++rank) {
      if (arrived_[rank].valid()) sendError(arrived_[rank].get(), Code::kTimeout, text);
    }
  }

  std::mutex mutex_;
  Fd listen_;
  Fd wake_;
  std::string label_;
  HelloAcceptor acceptor_;
  Secret secret_;
  int nranks_ = 0;
  int arrivedCount_ = 0;
  std::vector<Fd> arrived_;
  std::vector<uint8_t> addresses_;
  double timeoutSeconds_ = 0;
  int64_t deadlineNs_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

// Owns every root of the process; its destructor (at exit) stops and joins them.
class RootRegistry {
 public:
  static RootRegistry& instance() {
    static RootRegistry registry;
    return registry;
  }

  Status add(std::unique_ptr<BootstrapRoot> root) {
    std::vector<std::unique_ptr<BootstrapRoot>> finished;  // joined on return, after the unlock
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& existing : roots_) {
      if (existing->finished()) finished.push_back(std::move(existing));
    }
    std::erase(roots_, nullptr);
    NS_RETURN_IF_ERROR(root->start());
    roots_.push_back(std::move(root));
    return Status::Ok();
  }

 private:
  RootRegistry() { pthread_atfork(&prepareFork, &afterForkParent, &afterForkChild); }

  static void prepareFork() {
    RootRegistry& self = instance();
    self.mutex_.lock();
    for (auto& root : self.roots_) root->lockForFork();
  }
  static void afterForkParent() {
    RootRegistry& self = instance();
    for (auto& root : self.roots_) root->unlockAfterFork();
    self.mutex_.unlock();
  }
  // The child has no root threads: close its copies of their sockets and forget them (never
  // destroyed, as their std::thread objects refer to threads of the parent). They stay reachable
  // from a static list, so that a leak checker (LeakSanitizer) in a child that exits normally
  // does not report them.
  static void afterForkChild() {
    RootRegistry& self = instance();
    static auto* orphans = new std::vector<BootstrapRoot*>();
    for (auto& root : self.roots_) {
      root->closeEverythingInChild();
      root->unlockAfterFork();
      orphans->push_back(root.release());
    }
    self.roots_.clear();
    self.mutex_.unlock();
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<BootstrapRoot>> roots_;
};

}  // namespace

Status startBootstrapRoot(Fd listenFd, const SocketAddress& address, const Secret& secret) {
  return RootRegistry::instance().add(std::make_unique<BootstrapRoot>(std::move(listenFd), address, secret));
}

Result<UniqueId> createUniqueId() { return createUniqueId(SocketInterface::fromEnvironment()); }

Result<UniqueId> createUniqueId(const SocketInterface& interface) {
  NS_ASSIGN_OR_RETURN(InterfaceAddress address, findInterface(interface));
  SocketAddress bound;
  NS_ASSIGN_OR_RETURN(Fd listenFd, listenOn(address.address, &bound));
  NS_ASSIGN_OR_RETURN(Secret secret, randomSecret());
  NS_RETURN_IF_ERROR(startBootstrapRoot(std::move(listenFd), bound, secret));
  return encodeUniqueId(UniqueIdInfo{bound, secret});
}

}  // namespace nshim
