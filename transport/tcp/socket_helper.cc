// The Socket-transport helper thread (socket_helper.h).
#include "transport/tcp/socket_helper.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sched.h>

#include "common/clock.h"
#include "common/log.h"

namespace nshim::tcp {
namespace {

constexpr int kPollCapMs = 100;

}  // namespace

SocketHelper::SocketHelper(HelperOwner& owner, const std::vector<Channel*>& sockets, int64_t spinNs)
    : owner_(owner), spinNs_(spinNs), sockets_(sockets.size()), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  for (size_t i = 0; i < sockets.size(); ++i) sockets_[i].ch = sockets[i];
  thread_ = std::thread([this] { run(); });
}

SocketHelper::~SocketHelper() {
  stop_.store(true);
  wake();
  if (thread_.joinable()) thread_.join();
}

void SocketHelper::wake() {
  uint64_t one = 1;
  if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof(one));
}

void SocketHelper::push(const Channel& ch, const Op& op, bool isSend) {
  bool sleeping;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Socket& s : sockets_) {
      if (s.ch == &ch) (isSend ? s.sends : s.recvs).push_back(op);
    }
    sleeping = sleeping_;
  }
  if (sleeping) wake();  // a spinning thread finds the task on its next turn
}

void SocketHelper::failTasks(int peer, const Status& why) {
  std::vector<Op> failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Socket& s : sockets_) {
      if (peer >= 0 && s.ch->peer != peer) continue;
      s.dropped = true;
      s.dropStatus = why;
      for (int isSend = 0; isSend < 2; ++isSend) {
        std::deque<Op>& queue = isSend ? s.sends : s.recvs;
        const size_t keep = s.busy[isSend] && !queue.empty() ? 1 : 0;  // the thread fails it itself
        while (queue.size() > keep) {
          failed.push_back(queue.back());
          queue.pop_back();
        }
      }
    }
  }
  for (const Op& op : failed) owner_.taskFailed(op, why);
}

bool SocketHelper::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Socket& s : sockets_) {
    if (!s.sends.empty() || !s.recvs.empty()) return false;
  }
  return true;
}

void SocketHelper::run() {
  int64_t spinUntil = nowNs() + spinNs_;
  while (!stop_.load()) {
    bool moved = false;
    for (Socket& s : sockets_) {
      moved = drive(s, true) || moved;
      moved = drive(s, false) || moved;
    }
    const int64_t now = nowNs();
    if (moved) spinUntil = now + spinNs_;
    if (now < spinUntil && !idle()) {
      sched_yield();
      continue;
    }
    sleepUntilNews();
    spinUntil = nowNs() + spinNs_;
  }
}

// Sleeps in poll() on the sockets with tasks and the wake-up descriptor (new tasks, stop).
void SocketHelper::sleepUntilNews() {
  std::vector<pollfd> fds(1, pollfd{wake_.get(), POLLIN, 0});
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sleeping_ = true;  // from now on a push wakes us; one before this is in the poll set
    for (Socket& s : sockets_) {
      if (s.dropped) continue;
      short events = 0;
      if (!s.recvs.empty()) events |= POLLIN;
      if (!s.sends.empty()) events |= POLLOUT;
      if (events != 0) fds.push_back(pollfd{s.ch->fd, events, 0});
    }
  }
  if (::poll(fds.data(), fds.size(), kPollCapMs) > 0 && fds[0].revents != 0) {
    uint64_t count;
    (void)!::read(wake_.get(), &count, sizeof(count));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  sleeping_ = false;
}

// Moves the socket's tasks of one direction until the kernel takes (or has) no more. The front task
// is marked busy while the thread reads or writes it without the lock: failTasks leaves it alone.
bool SocketHelper::drive(Socket& s, bool isSend) {
  std::deque<Op>& queue = isSend ? s.sends : s.recvs;
  bool moved = false;
  while (true) {
    Op* op;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (s.dropped || queue.empty()) return moved;
      op = &queue.front();
      s.busy[isSend] = true;
    }
    iovec iov{op->buf + op->progressed, op->length - op->progressed};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    ssize_t n =
        isSend ? ::sendmsg(s.ch->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) : ::recvmsg(s.ch->fd, &msg, MSG_DONTWAIT);
    const int error = errno;
    const bool again = n < 0 && (error == EAGAIN || error == EWOULDBLOCK || error == EINTR);
    std::string failure;
    if (n < 0 && !again) failure = errnoText(error);
    if (n == 0 && !isSend && op->length > op->progressed) failure = "end of stream";
    if (n > 0) {
      moved = true;
      op->progressed += static_cast<size_t>(n);
      if (isSend) {
        owner_.countSent(s.ch->peer, static_cast<uint64_t>(n));
      } else {
        owner_.countReceived(s.ch->peer, static_cast<uint64_t>(n));
      }
    }
    if (!failure.empty()) {
      // Still busy: the peer's loss fails the other tasks and leaves this one to us.
      const Status why = owner_.socketFailed(s.ch->peer, failure);
      Op failed;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        s.busy[isSend] = false;
        s.dropped = true;
        s.dropStatus = why;
        failed = queue.front();
        queue.pop_front();
      }
      owner_.taskFailed(failed, why);
      return true;
    }
    Status dropStatus;
    Op finished;
    bool done = false, dropped = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s.busy[isSend] = false;
      dropped = s.dropped;
      done = op->progressed == op->length;
      if (dropped || done) {
        finished = *op;
        dropStatus = s.dropStatus;
        queue.pop_front();
      }
    }
    if (dropped) {
      owner_.taskFailed(finished, dropStatus);
      return true;
    }
    if (!done) return moved;  // the kernel takes (or has) no more now
    owner_.taskDone(finished);
  }
}

}  // namespace nshim::tcp
