// A by-hand latency/bandwidth check of the TCP transport (hidden; not a timed test):
//   ./build/unit_tests "[tcpbench]"   (NCCLSHIM_NSOCKS_PERPEER, NCCLSHIM_SPIN_US apply)
// Two processes ping-pong 1 KiB messages, then stream 64 MiB as 1 MiB messages; rank 0 prints the
// round-trip time and the bandwidth.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/clock.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {
namespace {

std::string pingPong(Transport& t, size_t bytes, int iterations, double* usPerRoundTrip) {
  std::vector<char> out(bytes, 'p'), in(bytes);
  int peer = 1 - t.rank();
  Deadline deadline = Deadline::after(120);
  int64_t start = 0;
  for (int i = -iterations / 10; i < iterations; ++i) {  // the first tenth warms up
    if (i == 0) start = nowNs();
    Request send, recv;
    Request* both[2] = {&recv, &send};
    if (t.rank() == 0) {
      (void)t.postSend(peer, 1, out.data(), bytes, &send);
      (void)t.postRecv(peer, 1, in.data(), bytes, &recv);
      Status status = t.waitAll(both, deadline);
      if (!status.ok()) return status.toString();
    } else {
      (void)t.postRecv(peer, 1, in.data(), bytes, &recv);
      Status status = waitOne(t, &recv, deadline);
      if (status.ok()) status = t.postSend(peer, 1, out.data(), bytes, &send);
      if (status.ok()) status = waitOne(t, &send, deadline);
      if (!status.ok()) return status.toString();
    }
  }
  *usPerRoundTrip = (nowNs() - start) * 1e-3 / iterations;
  return "";
}

// Rank 0 streams `total` bytes in `message`-byte messages; rank 1 acknowledges with one byte.
std::string stream(Transport& t, size_t total, size_t message, double* gbPerSecond) {
  size_t count = total / message;
  std::vector<char> buf(total, 's');
  std::vector<Request> reqs(count);
  std::vector<Request*> list;
  for (Request& req : reqs) list.push_back(&req);
  Deadline deadline = Deadline::after(120);
  char ack = 0;
  Request ackReq;
  int64_t start = nowNs();
  for (size_t i = 0; i < count; ++i) {
    Status status = t.rank() == 0 ? t.postSend(1, 2, buf.data() + i * message, message, &reqs[i])
                                  : t.postRecv(0, 2, buf.data() + i * message, message, &reqs[i]);
    if (!status.ok()) return status.toString();
  }
  Status status = t.waitAll(list, deadline);
  if (status.ok()) { status = t.rank() == 0 ? t.postRecv(1, 3, &ack, 1, &ackReq) : t.postSend(0, 3, &ack, 1, &ackReq); }
  if (status.ok()) status = waitOne(t, &ackReq, deadline);
  if (!status.ok()) return status.toString();
  *gbPerSecond = total / ((nowNs() - start) * 1e-9) / 1e9;
  return "";
}

TEST_CASE("TCP transport latency and bandwidth (by hand)", "[.][tcpbench]") {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  auto codes = testing::runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        TcpOptions options = TcpOptions::fromEnvironment();
        auto connected = connectTcpTransport(*id, rank, 2, options);
        if (!connected.ok()) return connected.status().toString();
        Transport& t = **connected;
        for (size_t bytes : {size_t(1), size_t(1024)}) {
          double us = 0;
          std::string error = pingPong(t, bytes, 20000, &us);
          if (!error.empty()) return error;
          if (rank == 0) std::printf("ping-pong %zu B: %.2f us round trip\n", bytes, us);
        }
        std::vector<double> rates;
        for (int repeat = 0; repeat < 7; ++repeat) {
          double rate = 0;
          std::string error = stream(t, 64 << 20, 1 << 20, &rate);
          if (!error.empty()) return error;
          rates.push_back(rate);
        }
        std::sort(rates.begin(), rates.end());
        if (rank == 0) {
          std::printf("stream 64 MiB in 1 MiB messages, %d sockets: median %.2f GB/s, best %.2f GB/s\n",
                      options.socketsPerPeer, rates[rates.size() / 2], rates.back());
        }
        return "";
      },
      300);
  CHECK(codes == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace nshim
