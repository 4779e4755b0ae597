// phynet_flow: the background traffic of `phynet --jobs` (job kind "background"). A TCP sink that
// reads and drops what arrives, and a sender bound to a NIC's address that writes at a fixed rate,
// constant or on/off, paced by a token bucket in 64 KiB writes:
//   phynet_flow sink ADDRESS PORT
//   phynet_flow send FROM_ADDRESS TO_ADDRESS:PORT RATE_MBIT ON_MS OFF_MS SECONDS(0 = until stopped)
// Each prints one line when it ends: the bytes it moved and for how long.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
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

int send(const std::string& from, const std::string& to, double mbit, double onMs, double offMs, double seconds) {
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
  using Clock = std::chrono::steady_clock;
  const double bytesPerS = mbit * 1e6 / 8;
  const size_t chunk = 1 << 16;
  std::vector<char> buf(chunk, 'f');
  Clock::time_point start = Clock::now();
  double credit = 0, lastS = 0;
  uint64_t total = 0;
  while (!stopRequested) {
    double nowS = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0 && nowS >= seconds) break;
    bool on = offMs <= 0 || std::fmod(nowS * 1e3, onMs + offMs) < onMs;
    if (on) credit = std::min(credit + (nowS - lastS) * bytesPerS, bytesPerS * 0.05 + chunk);
    lastS = nowS;
    if (!on || credit < chunk) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    ssize_t n = write(s.get(), buf.data(), chunk);
    if (n <= 0) break;
    credit -= static_cast<double>(n);
    total += static_cast<uint64_t>(n);
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("phynet_flow send: %llu bytes in %.3f s (%.1f Mbit/s)\n", static_cast<unsigned long long>(total), elapsed,
              elapsed > 0 ? total * 8 / elapsed / 1e6 : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction sa {};
  sa.sa_handler = onStop;  // no SA_RESTART: a blocked accept/read/write returns
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "sink" && argc == 4) return sink(argv[2], std::atoi(argv[3]));
  if (mode == "send" && argc == 8)
    return send(argv[2], argv[3], std::atof(argv[4]), std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7]));
  std::fprintf(stderr, "usage: phynet_flow sink ADDRESS PORT | send FROM TO:PORT RATE_MBIT ON_MS OFF_MS SECONDS\n");
  return 2;
}
