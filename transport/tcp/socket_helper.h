// One of NCCL's Socket-transport helper threads: NCCL gives each connection NCCL_SOCKET_NTHREADS
// threads that move the payload tasks of its NCCL_NSOCKS_PERTHREAD data sockets each, so a
// connection's data sockets copy in parallel (on loopback and fast NICs the copies into and out of
// the kernel bound the rate). The TCP transport hands a helper the tasks of its sockets (push); the
// helper moves them with non-blocking sendmsg / recvmsg outside the transport's mutex and reports
// each finished or failed task to its owner (HelperOwner), from its own thread. Like NCCL's, it
// retries its sockets in a loop while it has tasks (yielding the CPU on each turn); after
// `spinNs` without progress it sleeps in poll() until a socket or a new task wakes it.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "transport/bootstrap/socket.h"
#include "transport/tcp/tcp_channel.h"

namespace nshim::tcp {

// What a helper asks of its transport; called from the helper's thread without its lock held.
class HelperOwner {
 public:
  virtual void taskDone(const Op& op) = 0;
  virtual void taskFailed(const Op& op, const Status& why) = 0;
  // A socket of `peer` failed: the transport marks the peer lost (its requests fail, the helpers'
  // tasks too) and returns the status they fail with.
  virtual Status socketFailed(int peer, const std::string& why) = 0;
  virtual void countSent(int peer, uint64_t bytes) = 0;
  virtual void countReceived(int peer, uint64_t bytes) = 0;

 protected:
  ~HelperOwner() = default;
};

class SocketHelper {
 public:
  // Serves `sockets` (data sockets of one connection; the transport keeps them) from a new thread.
  SocketHelper(HelperOwner& owner, const std::vector<Channel*>& sockets, int64_t spinNs);
  ~SocketHelper();  // stops and joins the thread
  SocketHelper(const SocketHelper&) = delete;
  SocketHelper& operator=(const SocketHelper&) = delete;

  // Queues a task on one of the helper's sockets.
  void push(const Channel& ch, const Op& op, bool isSend);
  // Fails the tasks queued for `peer` (every peer: -1) with `why`; one in a system call now is
  // failed by the thread when the call returns. Later pushes for that peer are not expected.
  void failTasks(int peer, const Status& why);
  bool idle();  // no task queued

 private:
  struct Socket {
    Channel* ch = nullptr;
    std::deque<Op> sends;
    std::deque<Op> recvs;           // pushes at the back keep references to the front valid
    bool busy[2] = {false, false};  // [isSend]: the front task is in a system call
    bool dropped = false;
    Status dropStatus;
  };
  void run();
  bool drive(Socket& s, bool isSend);  // true when bytes moved
  void sleepUntilNews();
  void wake();

  HelperOwner& owner_;
  const int64_t spinNs_;
  std::mutex mutex_;       // the queues and flags of sockets_, sleeping_
  bool sleeping_ = false;  // the thread is in (or about to enter) poll(): a push must wake it
  std::vector<Socket> sockets_;
  Fd wake_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nshim::tcp
