// RDMA background flows (rdma_flow.h). Side channel: the sender connects over TCP from its NIC's
// address, sends its QP record, reads the sink's, both move their QPs to RTS, the sink answers one
// byte, and the writes begin. At the end the sender drains its writes and sends the bytes they
// carried (8 bytes, little-endian), which the sink prints: an RDMA write leaves no trace at the
// target that could be counted there. A side channel that ends early means the peer is gone.
#include "phynet/flow/rdma_flow.h"

#include <endian.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "phynet/flow/pacer.h"
#include "transport/bootstrap/socket.h"
#include "transport/ibverbs/ibverbs_write_stream.h"

namespace nshim::phynet {
namespace {

constexpr size_t kChunk = 1 << 16;  // one RDMA write, as the TCP flow's write
constexpr double kSetupS = 20;      // side channel and QP set-up (a slow VM needs seconds)
constexpr double kStallS = 10;      // writes that do not complete for this long: the peer or link is gone

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// One line for any failure: role, device (when known), host and address, the peer, the cause.
int failed(const char* role, const std::string& device, const std::string& address, const std::string& peer,
           const Status& why) {
  std::fprintf(stderr, "phynet_flow: rdma %s on host %s (%s, device %s) with %s failed: %s\n", role, hostName().c_str(),
               address.c_str(), device.empty() ? "not opened" : device.c_str(), peer.c_str(), why.message().c_str());
  return 1;
}

Status exchange(int fd, RdmaWriteStream& stream, bool sendFirst, const std::string& peer) {
  Deadline deadline = Deadline::after(kSetupS);
  std::vector<uint8_t> mine = stream.endpoint(), theirs(RdmaWriteStream::endpointBytes());
  std::string what = peer + " (RDMA flow set-up)";
  if (sendFirst) NS_RETURN_IF_ERROR(writeAll(fd, mine.data(), mine.size(), deadline, what));
  NS_RETURN_IF_ERROR(readAll(fd, theirs.data(), theirs.size(), deadline, what));
  if (!sendFirst) NS_RETURN_IF_ERROR(writeAll(fd, mine.data(), mine.size(), deadline, what));
  return stream.connect(theirs, peer);
}

}  // namespace

int rdmaSink(const std::string& address, int port, const volatile std::sig_atomic_t& stop) {
  auto listenAt = SocketAddress::parse(address, port);
  if (!listenAt.ok()) return failed("sink", "", address, "its sender", listenAt.status());
  SocketAddress bound;
  auto listener = listenOn(*listenAt, &bound);
  if (!listener.ok()) return failed("sink", "", address, "its sender", listener.status());
  Fd conn;
  SocketAddress from;
  while (!conn.valid() && !stop) {
    auto accepted = acceptPending(listener->get(), &from);
    if (!accepted.ok()) return failed("sink", "", address, "its sender", accepted.status());
    conn = std::move(accepted).value();
    if (!conn.valid()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!conn.valid()) return 0;  // stopped before a sender came
  const std::string peer = "sender " + from.host();
  auto stream = RdmaWriteStream::open(address, kChunk);
  if (!stream.ok()) return failed("sink", "", address, peer, stream.status());
  const std::string device = (*stream)->deviceName();
  Status ok = exchange(conn.get(), **stream, false, peer);
  const char ready = 'R';
  if (ok.ok()) ok = writeAll(conn.get(), &ready, 1, Deadline::after(kSetupS), peer);
  if (!ok.ok()) return failed("sink", device, address, peer, ok);
  // The writes land without a completion here; wait for the sender's count or its end.
  uint64_t total = 0;
  while (!stop) {
    Status got = readAll(conn.get(), &total, sizeof(total), Deadline::after(0.2), peer);
    if (got.ok()) {
      std::printf("phynet_flow sink: received %llu bytes by RDMA write on %s\n",
                  static_cast<unsigned long long>(le64toh(total)), device.c_str());
      return 0;
    }
    if (got.code() != Code::kTimeout) return failed("sink", device, address, peer, got);
  }
  std::printf("phynet_flow sink: stopped before the sender's count (RDMA writes on %s)\n", device.c_str());
  return 0;
}

int rdmaSend(const std::string& from, const std::string& toAddress, int port, double mbit, double onMs, double offMs,
             double seconds, double startAtWallS, const volatile std::sig_atomic_t& stop) {
  const std::string peer = fmt::format("sink {}:{}", toAddress, port);
  auto source = SocketAddress::parse(from, 0);
  auto target = SocketAddress::parse(toAddress, port);
  if (!source.ok() || !target.ok())
    return failed("send", "", from, peer, source.ok() ? target.status() : source.status());
  // The sink may still be starting (ssh into a slow VM): retry for a while.
  auto conn = connectWithRetry(
      *target, Deadline::after(kSetupS), [&] { return stop != 0; }, *source);
  if (!conn.ok()) return stop ? 0 : failed("send", "", from, peer, conn.status());
  auto opened = RdmaWriteStream::open(from, kChunk);
  if (!opened.ok()) return failed("send", "", from, peer, opened.status());
  RdmaWriteStream& stream = **opened;
  const std::string device = stream.deviceName();
  Status ok = exchange(conn->get(), stream, true, peer);
  char ready = 0;
  if (ok.ok()) ok = readAll(conn->get(), &ready, 1, Deadline::after(kSetupS), peer + " (RDMA flow set-up)");
  if (!ok.ok()) return failed("send", device, from, peer, ok);
  Pacer pacer(mbit, onMs, offMs, seconds, kChunk, startAtWallS);  // set up first, then wait for the start
  int checks = 0;
  while (!stop) {
    Pacer::Step step = pacer.next();
    if (step == Pacer::Step::kStop) break;
    if (step == Pacer::Step::kWait) {
      ok = stream.poll();
      if (ok.ok() && ++checks % 64 == 0 && connectionEnded(conn->get()))
        ok = Status(Code::kRemoteError, "the side channel ended: the sink is gone");
      if (!ok.ok()) return failed("send", device, from, peer, ok);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    ok = stream.write(kChunk, Deadline::after(kStallS));
    if (!ok.ok()) return failed("send", device, from, peer, ok);
    pacer.sent(kChunk);
  }
  ok = stream.drain(Deadline::after(kStallS));
  if (!ok.ok()) return failed("send", device, from, peer, ok);
  double elapsed = pacer.elapsedS();
  uint64_t total = stream.bytesCompleted();
  uint64_t wire = htole64(total);
  (void)writeAll(conn->get(), &wire, sizeof(wire), Deadline::after(2), peer);  // the sink prints it if it listens
  std::printf("phynet_flow send: %llu bytes in %.3f s (%.1f Mbit/s) by RDMA write on %s\n",
              static_cast<unsigned long long>(total), elapsed, elapsed > 0 ? total * 8 / elapsed / 1e6 : 0.0,
              device.c_str());
  return 0;
}

}  // namespace nshim::phynet
