// TCP transport implementation. Each connection (Channel) keeps a FIFO of pending sends and one of
// pending receives; only the head of each is on the wire. A progress pass walks the channels that
// have work (the active list), writing with sendmsg and reading with recvmsg until the kernel says
// EAGAIN. A receive reads its header and its payload in one call, directly into the user's buffer,
// and checks the header against the posted tag and length before counting a byte.
#include "transport/tcp/tcp_transport.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <tuple>

#include "common/log.h"
#include "common/settings.h"
#include "transport/core/network_transport.h"
#include "transport/tcp/tcp_channel.h"

namespace nshim {
namespace {

using namespace tcp;

constexpr int kPollCapMs = 100;

class TcpTransport final : public NetworkTransport {
 public:
  TcpTransport(PeerSockets sockets, const TcpOptions& options)
      : NetworkTransport("tcp", "TCP", sockets.rank, sockets.nranks,
                         SpinPolicy{static_cast<int64_t>(std::max(options.spinMicroseconds, 0)) * 1000,
                                    options.spinYield}),
        sockets_(std::move(sockets)),
        perPeer_(std::max(options.socketsPerPeer, 1)),
        channels_(static_cast<size_t>(nranks_) * perPeer_) {
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
    std::lock_guard<std::mutex> lock(mutex_);
    // The peers still learn of the end of requests still queued (sockets shut down).
    Status pending = forgetPendingRequestsLocked();
    if (!active_.empty()) abortLocked(pending);
  }  // sockets_ closes every connection

 private:
  static void applySocketBuffers(int fd, const TcpOptions& options) {
    const bool sameHost = connectsSameHost(fd);
    for (auto [which, configured, local] :
         {std::tuple{SocketBuffer::kSend, options.sendBufferBytes, TcpOptions::kLocalSendBufferBytes},
          std::tuple{SocketBuffer::kReceive, options.recvBufferBytes, TcpOptions::kLocalRecvBufferBytes}}) {
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

  // ---- NetworkTransport hooks.
  bool connectedTo(int peer) const override { return channels_[static_cast<size_t>(peer) * perPeer_].fd >= 0; }

  void enqueueLocked(int peer, Request* req, char* buf, bool isSend) override {
    Channel& ch = channel(peer, peers_[peer].nextLink(*req, isSend, perPeer_));
    OpRing<Op>& queue = isSend ? ch.sends : ch.recvs;
    bool wasIdle = queue.empty();
    queue.push(Op{req, buf, 0});
    if (!ch.listed) {
      ch.listed = true;
      active_.push_back(&ch);
    }
    if (isSend && wasIdle) driveSends(ch);  // small messages leave before the caller waits
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
      pollFds_.clear();
      pollChannels_.clear();
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
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < pollFds_.size(); ++i) {
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
    for (int index = 0; index < perPeer_; ++index) {
      Channel& ch = channel(peer, index);
      failQueue(ch.sends, why);
      failQueue(ch.recvs, why);
      ::shutdown(ch.fd, SHUT_RDWR);
    }
  }

  void dropAllLocked(const Status& why) override {
    for (Channel& ch : channels_) {
      failQueue(ch.sends, why);
      failQueue(ch.recvs, why);
      if (ch.fd >= 0) ::shutdown(ch.fd, SHUT_RDWR);  // peers see the end of stream at once
    }
    for (Channel* ch : active_) ch->listed = false;
    active_.clear();
  }

  // ---- The data path.
  void driveSends(Channel& ch) {
    while (!ch.sends.empty()) {
      Op& op = ch.sends.front();
      size_t bytes = op.req->bytes;
      size_t total = kHeaderBytes + bytes;
      iovec iov[2];
      int count = 0;
      if (op.progressed < kHeaderBytes) {
        encodeHeader(ch.txHeader, op.req->tag, bytes);
        iov[count++] = iovec{ch.txHeader + op.progressed, kHeaderBytes - op.progressed};
        if (bytes > 0) iov[count++] = iovec{op.buf, bytes};
      } else {
        iov[count++] = iovec{op.buf + (op.progressed - kHeaderBytes), total - op.progressed};
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
      addRelaxed(peers_[ch.peer].sent,
                 std::max(op.progressed, kHeaderBytes) - std::max(before, kHeaderBytes));
      addRelaxed(peers_[ch.peer].sentWire, static_cast<uint64_t>(n));
      if (op.progressed < total) return;  // the socket buffer is full
      Request* req = op.req;
      ch.sends.pop();
      req->complete(Status());
    }
  }

  void driveRecvs(Channel& ch) {
    while (!ch.recvs.empty()) {
      Op& op = ch.recvs.front();
      size_t bytes = op.req->bytes;
      size_t total = kHeaderBytes + bytes;
      iovec iov[2];
      int count = 0;
      if (op.progressed < kHeaderBytes) {
        iov[count++] = iovec{ch.rxHeader + op.progressed, kHeaderBytes - op.progressed};
        if (bytes > 0) iov[count++] = iovec{op.buf, bytes};
      } else {
        iov[count++] = iovec{op.buf + (op.progressed - kHeaderBytes), total - op.progressed};
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
      if (before < kHeaderBytes && op.progressed >= kHeaderBytes && !headerMatches(ch, op)) return;
      addRelaxed(peers_[ch.peer].received,
                 std::max(op.progressed, kHeaderBytes) - std::max(before, kHeaderBytes));
      if (op.progressed < total) return;  // the socket is drained
      Request* req = op.req;
      ch.recvs.pop();
      req->complete(Status());
    }
  }

  // Checks a complete received header against the posted receive; a mismatch aborts the transport.
  bool headerMatches(Channel& ch, Op& op) {
    uint32_t magic;
    uint64_t tag, length;
    bool valid = decodeHeader(ch.rxHeader, &magic, &tag, &length);
    if (valid && tag == op.req->tag && length == op.req->bytes) return true;
    Status error = !valid
        ? NS_ERROR(Code::kRemoteError, "rank {} received a corrupt message header from rank {} on socket {} "
                   "(magic {:#010x})", rank_, ch.peer, ch.index, magic)
        : NS_ERROR(Code::kRemoteError,
                   "rank {} received a message from rank {} with tag {:#x} and {} bytes, but the matching receive "
                   "posted by rank {} expects tag {:#x} and {} bytes: the ranks disagree about the operation "
                   "sequence", rank_, ch.peer, tag, length, rank_, op.req->tag, op.req->bytes);
    NS_WARN("{}", error.message());
    Request* req = op.req;
    ch.recvs.pop();
    fail(req, error);
    abortLocked(error);
    return false;
  }

  PeerSockets sockets_;
  const int perPeer_;
  std::vector<Channel> channels_;  // [peer * perPeer_ + index]; never resized (pointers are kept)
  std::vector<Channel*> active_;
  std::vector<pollfd> pollFds_;
  std::vector<Channel*> pollChannels_;
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
  BootstrapOptions bootstrap{options.socketsPerPeer, options.timeoutSeconds, options.interface, std::move(peers)};
  NS_ASSIGN_OR_RETURN(PeerSockets sockets, bootstrapConnect(id, rank, nranks, bootstrap));
  return std::unique_ptr<Transport>(createTcpTransport(std::move(sockets), options));
}

}  // namespace nshim
