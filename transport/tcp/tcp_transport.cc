// TCP transport implementation. Each socket (Channel) keeps a FIFO of pending sends and one of
// pending receives; only the head of each is on the wire. A progress pass walks the sockets that
// have work (the active list), writing with sendmsg and reading with recvmsg until the kernel says
// EAGAIN. A receive reads its header and its payload in one call, directly into the user's buffer,
// and checks the header against the posted tag and length before counting a byte.
//
// Sockets come in NCCL's connections (nccl_socket_settings.h): per peer `connections` of one
// control socket and `dataSockets` data sockets each, [peer][connection * perConnection + k], k = 0
// the control socket. Without data sockets a message is one part on the control socket. With them,
// as NCCL's Socket transport: the header goes on the control socket and the payload is cut into
// tasks of max(NCCL_SOCKET_MIN_TASKSIZE, bytes / dataSockets) dealt round robin over the data
// sockets, the deal continuing from message to message; both ends deal the same way, so the k-th
// task on a data socket matches the k-th one posted there by the peer. The message completes when
// its last part does. As in NCCL, NCCL_SOCKET_NTHREADS helper threads per connection and direction
// move the tasks of its data sockets (data socket k: thread k mod threads; socket_helper.h), started
// at their first task; the waiting thread moves the control sockets and wakes on the helpers'
// news.
#include "transport/tcp/tcp_transport.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <tuple>

#include "common/log.h"
#include "common/settings.h"
#include "transport/bootstrap/bootstrap_messages.h"
#include "transport/bootstrap/socket.h"
#include "transport/core/network_transport.h"
#include "transport/tcp/socket_helper.h"
#include "transport/tcp/tcp_channel.h"

namespace nshim {
namespace {

using namespace tcp;

constexpr int kPollCapMs = 100;

// Counters that socket helpers and the waiting thread both add to.
void addShared(std::atomic<uint64_t>& counter, uint64_t value) { counter.fetch_add(value, std::memory_order_relaxed); }

class TcpTransport final : public NetworkTransport, private HelperOwner {
 public:
  TcpTransport(PeerSockets sockets, const TcpOptions& options)
      : NetworkTransport(
            "tcp", "TCP", sockets.rank, sockets.nranks,
            SpinPolicy{static_cast<int64_t>(std::max(options.spinMicroseconds, 0)) * 1000, options.spinYield}),
        sockets_(std::move(sockets)), connections_(std::max(options.socketsPerPeer, 1)),
        perConnection_(options.socket.socketsPerConnection()), perPeer_(connections_ * perConnection_),
        socket_(options.socket), channels_(static_cast<size_t>(nranks_) * perPeer_),
        deals_(static_cast<size_t>(nranks_) * connections_), sendSockets_(static_cast<size_t>(nranks_), 0),
        helpers_(static_cast<size_t>(nranks_) * connections_ * std::max(socket_.threads, 0) * 2),
        helperNews_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        helperSpinNs_(static_cast<int64_t>(std::max(options.spinMicroseconds, 0)) * 1000) {
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank_ || sockets_.sockets[peer].empty()) continue;  // itself, or a peer left out
      for (int index = 0; index < perPeer_; ++index) {
        Channel& ch = channel(peer, index);
        ch.fd = sockets_.sockets[peer][index].get();
        ch.peer = peer;
        ch.index = index;
        applySocketBuffers(ch.fd, options);
      }
    }
    active_.reserve(channels_.size());
    pollFds_.reserve(channels_.size());
    pollChannels_.reserve(channels_.size());
  }

  ~TcpTransport() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The peers still learn of the end of requests still queued (sockets shut down).
      Status pending = forgetPendingRequestsLocked();
      bool helpersIdle = true;
      for (auto& helper : helpers_) helpersIdle = helpersIdle && (!helper || helper->idle());
      if (!active_.empty() || !helpersIdle) abortLocked(pending);
    }
    helpers_.clear();  // joined without the mutex: a helper may be waiting for it
  }                    // sockets_ closes every connection

 private:
  static void applySocketBuffers(int fd, const TcpOptions& options) {
    const bool sameHost = connectsSameHost(fd);
    // NCCLSHIM_SOCKET_*BUF first, then NCCL's NCCL_SOCKET_*BUF, then the automatic choice.
    const int send = options.sendBufferBytes >= 0 ? options.sendBufferBytes : options.socket.sendBufferBytes;
    const int recv = options.recvBufferBytes >= 0 ? options.recvBufferBytes : options.socket.recvBufferBytes;
    for (auto [which, configured, local] :
         {std::tuple{SocketBuffer::kSend, send, TcpOptions::kLocalSendBufferBytes},
          std::tuple{SocketBuffer::kReceive, recv, TcpOptions::kLocalRecvBufferBytes}}) {
      int bytes = configured < 0 ? (sameHost ? local : 0) : configured;
      if (bytes <= 0) continue;  // the kernel's autotuning
      Status set = setSocketBuffer(fd, which, bytes);
      if (set.ok()) continue;
      // The automatic choice is only a speed-up: say so quietly; a size the user asked for, loudly.
      if (configured < 0) {
        NS_INFO("TCP transport: {}", set.message());
      } else {
        NS_WARN("TCP transport: {}", set.message());
      }
    }
  }

  Channel& channel(int peer, int index) { return channels_[static_cast<size_t>(peer) * perPeer_ + index]; }
  // Where each direction of a connection deals its next payload task (data socket index).
  struct Deal {
    int nextSend = 0;
    int nextRecv = 0;
  };
  Deal& deal(int peer, int connection) { return deals_[static_cast<size_t>(peer) * connections_ + connection]; }

  // ---- NetworkTransport hooks.
  bool connectedTo(int peer) const override { return channels_[static_cast<size_t>(peer) * perPeer_].fd >= 0; }

  void enqueueLocked(int peer, Request* req, char* buf, bool isSend) override {
    const int connection = peers_[peer].nextLink(*req, isSend, connections_);
    const int control = connection * perConnection_;
    const size_t bytes = req->bytes;
    if (isSend && perConnection_ > 1) markSendSocket(peer, control);
    if (socket_.onControlSocket(bytes)) {
      queuePart(channel(peer, control), Op{req, buf, bytes, true, nullptr, 0}, isSend);
      return;
    }
    const int tasks = socket_.taskCount(bytes);
    const size_t task = socket_.taskBytes(bytes);
    auto* split = new SplitMessage(tasks + 1);
    queuePart(channel(peer, control), Op{req, buf, 0, true, split, 0}, isSend);
    int& next = isSend ? deal(peer, connection).nextSend : deal(peer, connection).nextRecv;
    for (int i = 0; i < tasks; ++i) {
      const size_t offset = static_cast<size_t>(i) * task;
      const int k = next;
      next = (next + 1) % socket_.dataSockets();
      if (isSend) markSendSocket(peer, control + 1 + k);
      const Op op{req, buf + offset, std::min(task, bytes - offset), false, split, 0};
      if (socket_.threads > 0) {
        helper(peer, connection, k, isSend).push(channel(peer, control + 1 + k), op, isSend);
      } else {
        queuePart(channel(peer, control + 1 + k), op, isSend);
      }
    }
  }

  // The helper thread of data socket k of a connection in one direction (k mod threads; NCCL has a
  // connection, so threads, per direction), started at its first task.
  SocketHelper& helper(int peer, int connection, int k, bool isSend) {
    const int threads = socket_.threads;
    const int thread = k % threads;
    std::unique_ptr<SocketHelper>& slot =
        helpers_[((static_cast<size_t>(peer) * connections_ + connection) * threads + thread) * 2 + (isSend ? 1 : 0)];
    if (!slot) {
      std::vector<Channel*> served;
      for (int j = thread; j < socket_.dataSockets(); j += threads) {
        served.push_back(&channel(peer, connection * perConnection_ + 1 + j));
      }
      slot = std::make_unique<SocketHelper>(static_cast<HelperOwner&>(*this), served, helperSpinNs_);
    }
    return *slot;
  }

  // ---- HelperOwner: called from helper threads.
  void taskDone(const Op& op) override {
    if (finishPart(op)) wakeWaiter();  // only a whole message is news to the waiter
  }
  void taskFailed(const Op& op, const Status& why) override {
    if (op.split == nullptr || op.split->partFailed()) fail(op.req, why);
    wakeWaiter();
  }
  Status socketFailed(int peer, const std::string& why) override {
    std::lock_guard<std::mutex> lock(mutex_);
    failPeerLocked(peer, why);
    return aborted_ ? abortStatus_ : peers_[peer].lostStatus;
  }
  void countSent(int peer, uint64_t bytes) override {
    addShared(peers_[peer].sent, bytes);
    addShared(peers_[peer].sentWire, bytes);
  }
  void countReceived(int peer, uint64_t bytes) override { addShared(peers_[peer].received, bytes); }
  void wakeWaiter() {
    uint64_t one = 1;
    if (helperNews_.valid()) (void)!::write(helperNews_.get(), &one, sizeof(one));
  }

  // With data sockets the flows of a peer are sockets, not connections: PeerLink::nextLink marked
  // the connection's number, this mask replaces it with the sockets that carried sends.
  void markSendSocket(int peer, int index) {
    uint64_t& mask = sendSockets_[static_cast<size_t>(peer)];
    if (index < 64) mask |= uint64_t{1} << index;
    peers_[peer].sendLinkMask.store(mask, std::memory_order_relaxed);
  }

  void queuePart(Channel& ch, const Op& op, bool isSend) {
    OpRing<Op>& queue = isSend ? ch.sends : ch.recvs;
    bool wasIdle = queue.empty();
    queue.push(op);
    if (!ch.listed) {
      ch.listed = true;
      active_.push_back(&ch);
    }
    if (isSend && wasIdle) driveSends(ch);  // small messages leave before the caller waits
  }

  // A part is done: its message completes with its last part.
  // True when that completed its message.
  bool finishPart(const Op& op) {
    if (op.split != nullptr && !op.split->partDone()) return false;  // more parts to go, or failed already
    op.req->complete(Status());
    return true;
  }

  // Fails the messages of a queue's parts (each message once).
  void failParts(OpRing<Op>& queue, const Status& why) {
    while (!queue.empty()) {
      Op op = queue.front();
      queue.pop();
      if (op.split != nullptr && !op.split->partFailed()) continue;  // its message has failed already
      fail(op.req, why);
    }
  }

  // One pass over every channel with pending work; idle channels leave the active list. Returns
  // false: TCP re-arms its spin only after a wake-up from poll(), not after progress.
  bool progressLocked() override {
    for (size_t i = 0; i < active_.size() && !aborted_; ++i) {
      Channel& ch = *active_[i];
      if (!ch.sends.empty()) driveSends(ch);
      if (!ch.recvs.empty()) driveRecvs(ch);
    }
    size_t kept = 0;
    for (Channel* ch : active_) {
      if (!ch->sends.empty() || !ch->recvs.empty()) {
        active_[kept++] = ch;
      } else {
        ch->listed = false;
      }
    }
    active_.resize(kept);
    return false;
  }

  // Sleeps in poll() on the channels with pending work. Returns true when something happened.
  bool sleepUntilNews(Deadline deadline) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pollFds_.assign(1, pollfd{helperNews_.get(), POLLIN, 0});  // a helper finished or failed a task
      pollChannels_.assign(1, nullptr);
      for (Channel* ch : active_) {
        short events = POLLRDHUP;
        if (!ch->recvs.empty()) events |= POLLIN;
        if (!ch->sends.empty()) events |= POLLOUT;
        pollFds_.push_back(pollfd{ch->fd, events, 0});
        pollChannels_.push_back(ch);
      }
    }
    int ready = ::poll(pollFds_.data(), pollFds_.size(), deadline.remainingMs(kPollCapMs));
    if (ready <= 0) return false;
    if (pollFds_[0].revents != 0) {
      uint64_t count;
      (void)!::read(helperNews_.get(), &count, sizeof(count));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 1; i < pollFds_.size(); ++i) {
      Channel& ch = *pollChannels_[i];
      // A peer that closed its end will never read: sends waiting for buffer space cannot finish.
      // (Pending receives find out by reading the end of stream after any data still queued.)
      if ((pollFds_[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) && ch.recvs.empty() && !ch.sends.empty()) {
        failPeerLocked(ch.peer, "the peer closed the connection");
      }
    }
    return true;
  }

  // The peers other than `peer` whose connections have ended as well (end of stream or a reset
  // already waiting; data still unread hides one). A killed process closes all of its sockets at
  // once, while the ranks that fail because of it close theirs a moment later: a rank whose ring
  // neighbour gave up first thus still names the rank that was lost.
  std::vector<int> otherEndedPeersLocked(int peer) override {
    std::vector<int> ended;
    if (aborted_) return ended;
    for (int other = 0; other < nranks_; ++other) {
      if (other == rank_ || other == peer || channel(other, 0).fd < 0) continue;
      bool gone = peers_[other].lost;
      for (int index = 0; index < perPeer_ && !gone; ++index) gone = connectionEnded(channel(other, index).fd);
      if (gone) ended.push_back(other);
    }
    return ended;
  }

  void dropPeerLocked(int peer, const Status& why, const std::vector<int>& /*alsoEnded*/) override {
    for (auto& helper : helpers_) {
      if (helper) helper->failTasks(peer, why);
    }
    for (int index = 0; index < perPeer_; ++index) {
      Channel& ch = channel(peer, index);
      failParts(ch.sends, why);
      failParts(ch.recvs, why);
      ::shutdown(ch.fd, SHUT_RDWR);
    }
  }

  void dropAllLocked(const Status& why) override {
    for (auto& helper : helpers_) {
      if (helper) helper->failTasks(-1, why);
    }
    for (Channel& ch : channels_) {
      failParts(ch.sends, why);
      failParts(ch.recvs, why);
      if (ch.fd >= 0) ::shutdown(ch.fd, SHUT_RDWR);  // peers see the end of stream at once
    }
    for (Channel* ch : active_) ch->listed = false;
    active_.clear();
  }

  // ---- The data path.
  void driveSends(Channel& ch) {
    while (!ch.sends.empty()) {
      Op& op = ch.sends.front();
      const size_t head = op.header ? kHeaderBytes : 0;
      const size_t total = op.total();
      iovec iov[2];
      int count = 0;
      if (op.progressed < head) {
        encodeHeader(ch.txHeader, op.req->tag, op.req->bytes);
        iov[count++] = iovec{ch.txHeader + op.progressed, head - op.progressed};
        if (op.length > 0) iov[count++] = iovec{op.buf, op.length};
      } else {
        iov[count++] = iovec{op.buf + (op.progressed - head), total - op.progressed};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = count;
      ssize_t n = ::sendmsg(ch.fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR) continue;
        return failPeerLocked(ch.peer, errnoText(errno));
      }
      size_t before = op.progressed;
      op.progressed += static_cast<size_t>(n);
      addShared(peers_[ch.peer].sent, std::max(op.progressed, head) - std::max(before, head));
      addShared(peers_[ch.peer].sentWire, static_cast<uint64_t>(n));
      if (op.progressed < total) return;  // the socket buffer is full
      Op done = op;
      ch.sends.pop();
      finishPart(done);
    }
  }

  void driveRecvs(Channel& ch) {
    while (!ch.recvs.empty()) {
      Op& op = ch.recvs.front();
      const size_t head = op.header ? kHeaderBytes : 0;
      const size_t total = op.total();
      iovec iov[2];
      int count = 0;
      if (op.progressed < head) {
        iov[count++] = iovec{ch.rxHeader + op.progressed, head - op.progressed};
        if (op.length > 0) iov[count++] = iovec{op.buf, op.length};
      } else {
        iov[count++] = iovec{op.buf + (op.progressed - head), total - op.progressed};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = count;
      ssize_t n = ::recvmsg(ch.fd, &msg, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR) continue;
        return failPeerLocked(ch.peer, errnoText(errno));
      }
      if (n == 0) return failPeerLocked(ch.peer, "end of stream");
      size_t before = op.progressed;
      op.progressed += static_cast<size_t>(n);
      if (before < head && op.progressed >= head && !headerMatches(ch, op)) return;
      addShared(peers_[ch.peer].received, std::max(op.progressed, head) - std::max(before, head));
      if (op.progressed < total) return;  // the socket is drained
      Op done = op;
      ch.recvs.pop();
      finishPart(done);
    }
  }

  // Checks a complete received header against the posted receive; a mismatch aborts the transport.
  bool headerMatches(Channel& ch, Op& op) {
    uint32_t magic;
    uint64_t tag, length;
    bool valid = decodeHeader(ch.rxHeader, &magic, &tag, &length);
    if (valid && tag == op.req->tag && length == op.req->bytes) return true;
    Status error =
        !valid
            ? NS_ERROR(Code::kRemoteError,
                       "rank {} received a corrupt message header from rank {} on socket {} "
                       "(magic {:#010x})",
                       rank_, ch.peer, ch.index, magic)
            : NS_ERROR(Code::kRemoteError,
                       "rank {} received a message from rank {} with tag {:#x} and {} bytes, but the matching receive "
                       "posted by rank {} expects tag {:#x} and {} bytes: the ranks disagree about the operation "
                       "sequence",
                       rank_, ch.peer, tag, length, rank_, op.req->tag, op.req->bytes);
    NS_WARN("{}", error.message());
    Op failed = op;
    ch.recvs.pop();
    if (failed.split == nullptr || failed.split->partFailed()) fail(failed.req, error);
    abortLocked(error);
    return false;
  }

  PeerSockets sockets_;
  const int connections_;    // NCCL connections per peer (a request's channel picks one)
  const int perConnection_;  // its control socket and data sockets
  const int perPeer_;
  const NcclSocketSettings socket_;
  std::vector<Channel> channels_;      // [peer * perPeer_ + index]; never resized (pointers are kept)
  std::vector<Deal> deals_;            // [peer * connections_ + connection]
  std::vector<uint64_t> sendSockets_;  // per peer: the sockets that carried sends (data sockets)
  std::vector<Channel*> active_;
  std::vector<pollfd> pollFds_;  // [0]: helperNews_
  std::vector<Channel*> pollChannels_;
  // [((peer * connections_ + connection) * threads + thread) * 2 + isSend], started at first use;
  // the destructor joins them before the channels and sockets they use go.
  std::vector<std::unique_ptr<SocketHelper>> helpers_;
  Fd helperNews_;               // written by a helper for every task it finishes or fails
  const int64_t helperSpinNs_;  // NCCLSHIM_SPIN_US: how long a helper retries its sockets before it sleeps
};

}  // namespace

TcpOptions TcpOptions::fromEnvironment() {
  TcpOptions options;
  options.socketsPerPeer = static_cast<int>(settingInt(Setting::NCCLSHIM_NSOCKS_PERPEER));
  options.timeoutSeconds = settingDouble(Setting::NCCLSHIM_TIMEOUT);
  options.spinMicroseconds = static_cast<int>(settingInt(Setting::NCCLSHIM_SPIN_US));
  options.spinYield = settingBool(Setting::NCCLSHIM_SPIN_YIELD);
  options.sendBufferBytes = static_cast<int>(settingInt(Setting::NCCLSHIM_SOCKET_SNDBUF));  // -1: auto
  options.recvBufferBytes = static_cast<int>(settingInt(Setting::NCCLSHIM_SOCKET_RCVBUF));
  return options;
}

std::unique_ptr<Transport> createTcpTransport(PeerSockets sockets, const TcpOptions& options) {
  return std::make_unique<TcpTransport>(std::move(sockets), options);
}

Result<std::unique_ptr<Transport>> connectTcpTransport(const UniqueId& id, int rank, int nranks,
                                                       const TcpOptions& options, std::vector<bool> peers) {
  TcpOptions resolved = options;
  Result<InterfaceAddress> nic = findInterface(options.interface);
  NS_ASSIGN_OR_RETURN(resolved.socket, readNcclSocketSettings(options.ncclVariables, nic.ok() ? nic->name : "lo"));
  const int sockets = std::max(options.socketsPerPeer, 1) * resolved.socket.socketsPerConnection();
  if (sockets > bootstrap::kMaxSocketsPerPeer) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{} connections per peer (NCCLSHIM_NSOCKS_PERPEER) x {} sockets each (a "
                    "control socket and NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = {} data sockets, {}) is {} "
                    "sockets per peer, above the most the TCP transport opens ({})",
                    options.socketsPerPeer, resolved.socket.socketsPerConnection(), resolved.socket.dataSockets(),
                    resolved.socket.source, sockets, bootstrap::kMaxSocketsPerPeer);
  }
  if (resolved.socket.dataSockets() > 0) {
    NS_INFO("TCP transport: {} data sockets per connection ({}), tasks of at least {} bytes",
            resolved.socket.dataSockets(), resolved.socket.source, resolved.socket.minTaskBytes);
  }
  BootstrapOptions bootstrap{sockets, options.timeoutSeconds, options.interface, std::move(peers)};
  NS_ASSIGN_OR_RETURN(PeerSockets connected, bootstrapConnect(id, rank, nranks, bootstrap));
  return std::unique_ptr<Transport>(createTcpTransport(std::move(connected), resolved));
}

}  // namespace nshim
