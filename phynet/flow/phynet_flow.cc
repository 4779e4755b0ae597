// phynet_flow: the background traffic of `phynet --jobs` (job kind "background"). A sink, and a
// sender bound to a NIC's address that sends at a fixed rate, constant or on/off, paced by a token
// bucket (pacer.h) in 64 KiB writes: over TCP (the sink reads and drops what arrives), or as RDMA
// writes over an RC QP on the NIC's RDMA device (rdma_flow.cc):
//   phynet_flow sink ADDRESS PORT [tcp|rdma]
//   phynet_flow send FROM_ADDRESS TO_ADDRESS:PORT RATE_MBIT ON_MS OFF_MS SECONDS(0 = until stopped) [tcp|rdma [START_AT]]
//   (START_AT: the shared start in seconds since the epoch; the sender connects first, then waits for it)
// Each stops on SIGTERM/SIGINT or at the end of a piped stdin, and prints one line when it ends:
// the bytes it moved and for how long.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "phynet/flow/pacer.h"
#include "phynet/flow/rdma_flow.h"

namespace {

volatile std::sig_atomic_t stopRequested = 0;
void onStop(int) { stopRequested = 1; }

class Fd {  // closes the socket it owns
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool address(const std::string& ip, int port, sockaddr_in* out) {
  std::memset(out, 0, sizeof(*out));
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, ip.c_str(), &out->sin_addr) == 1;
}

int fail(const char* what) {
  std::fprintf(stderr, "phynet_flow: %s: %s\n", what, std::strerror(errno));
  return 1;
}

int sink(const std::string& ip, int port) {
  sockaddr_in a;
  if (!address(ip, port, &a)) return fail("bad address");
  Fd listener(socket(AF_INET, SOCK_STREAM, 0));
  int one = 1;
  setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return fail("bind");
  if (listen(listener.get(), 4) != 0) return fail("listen");
  Fd conn(accept(listener.get(), nullptr, nullptr));
  if (conn.get() < 0) return stopRequested ? 0 : fail("accept");
  std::vector<char> buf(1 << 16);
  uint64_t total = 0;
  for (;;) {
    ssize_t n = read(conn.get(), buf.data(), buf.size());
    if (n <= 0) break;
    total += static_cast<uint64_t>(n);
  }
  std::printf("phynet_flow sink: received %llu bytes\n", static_cast<unsigned long long>(total));
  return 0;
}

int send(const std::string& from, const std::string& to, double mbit, double onMs, double offMs, double seconds,
         double startAtWallS) {
  size_t colon = to.rfind(':');
  sockaddr_in src, dst;
  if (colon == std::string::npos || !address(from, 0, &src) ||
      !address(to.substr(0, colon), std::atoi(to.c_str() + colon + 1), &dst))
    return fail("bad address");
  Fd s(socket(AF_INET, SOCK_STREAM, 0));
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0) return fail("bind");
  bool connected = false;
  for (int i = 0; i < 50 && !connected && !stopRequested; ++i) {
    connected = connect(s.get(), reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) == 0;
    if (!connected) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!connected) return fail("connect");
  const size_t chunk = 1 << 16;
  std::vector<char> buf(chunk, 'f');
  nshim::phynet::Pacer pacer(mbit, onMs, offMs, seconds, chunk, startAtWallS);  // connected first, then the start
  uint64_t total = 0;
  while (!stopRequested) {
    nshim::phynet::Pacer::Step step = pacer.next();
    if (step == nshim::phynet::Pacer::Step::kStop) break;
    if (step == nshim::phynet::Pacer::Step::kWait) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    ssize_t n = write(s.get(), buf.data(), chunk);
    if (n <= 0) break;
    pacer.sent(static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  double elapsed = pacer.elapsedS();
  std::printf("phynet_flow send: %llu bytes in %.3f s (%.1f Mbit/s)\n", static_cast<unsigned long long>(total), elapsed,
              elapsed > 0 ? total * 8 / elapsed / 1e6 : 0.0);
  return 0;
}

// A piped stdin (what `phynet --jobs` gives a flow, and ssh passes on) that ends means stop: a
// watcher thread, with the signals blocked, sends the process SIGTERM so that the main thread's
// blocked accept/read/write returns. A terminal or /dev/null on stdin is not watched.
void watchStdin() {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by the thread; undone below for main
  std::thread([] {
    char byte;
    while (read(STDIN_FILENO, &byte, 1) > 0) {}
    kill(getpid(), SIGTERM);
  }).detach();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction sa {};
  sa.sa_handler = onStop;  // no SA_RESTART: a blocked accept/read/write returns
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  watchStdin();
  std::string mode = argc > 1 ? argv[1] : "";
  // Optional last arguments: the transport, tcp (the default) or rdma; after it, for a sender, the
  // shared start (seconds since the epoch) it sets up ahead of and waits for.
  std::string transport = mode == "sink" ? (argc == 5 ? argv[4] : "tcp") : (argc >= 9 ? argv[8] : "tcp");
  const double startAtWallS = mode == "send" && argc == 10 ? std::atof(argv[9]) : 0;
  bool known = transport == "tcp" || transport == "rdma";
  bool rdma = transport == "rdma";
  if (known && mode == "sink" && (argc == 4 || argc == 5))
    return rdma ? nshim::phynet::rdmaSink(argv[2], std::atoi(argv[3]), stopRequested)
                : sink(argv[2], std::atoi(argv[3]));
  if (known && mode == "send" && argc >= 8 && argc <= 10) {
    if (!rdma)
      return send(argv[2], argv[3], std::atof(argv[4]), std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7]),
                  startAtWallS);
    std::string to = argv[3];
    size_t colon = to.rfind(':');
    if (colon == std::string::npos) return fail("bad address");
    return nshim::phynet::rdmaSend(argv[2], to.substr(0, colon), std::atoi(to.c_str() + colon + 1), std::atof(argv[4]),
                                   std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7]), startAtWallS,
                                   stopRequested);
  }
  std::fprintf(stderr,
               "usage: phynet_flow sink ADDRESS PORT [tcp|rdma] | send FROM TO:PORT RATE_MBIT ON_MS OFF_MS SECONDS "
               "[tcp|rdma [START_AT]]\n");
  return 2;
}
