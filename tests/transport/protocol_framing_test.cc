// Tests of NCCL's protocol lines (common/nccl_protocol.h) and of the transport that frames messages
// in them (protocol_framing_transport.h): every length round-trips through LL words and LL128 lines
// of the documented size, a word or line with a wrong flag is found, and between three forked ranks over
// shared memory every byte of many message sizes arrives while the byte counters count the lines;
// ranks that frame a message differently fail with an error instead of a hang.
#include <cstring>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/nccl_protocol.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "transport/layered/protocol_framing_transport.h"
#include "transport/shm/shm_transport.h"

namespace nshim {
namespace {

using testing::runRanksInProcesses;
using namespace tcptest;

std::vector<char> payloadOf(size_t bytes) {
  std::vector<char> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<char>(i * 131 + 7);
  return out;
}

TEST_CASE("protocol lines: LL is twice the payload, LL128 128 per 120, Simple the payload", "[protocol]") {
  CHECK(protocolWireBytes(Protocol::kLL, 0) == 0);
  CHECK(protocolWireBytes(Protocol::kLL, 1) == 2);
  CHECK(protocolWireBytes(Protocol::kLL, 6) == 12);
  CHECK(protocolWireBytes(Protocol::kLL, 8) == 16);
  CHECK(protocolWireBytes(Protocol::kLL, 8192) == 16384);
  CHECK(protocolWireBytes(Protocol::kLL128, 120) == 128);
  CHECK(protocolWireBytes(Protocol::kLL128, 121) == 256);
  CHECK(protocolWireBytes(Protocol::kLL128, 120 * 1000) == 128 * 1000);
  CHECK(protocolWireBytes(Protocol::kSimple, 77) == 77);
  CHECK(protocolWireBytes(Protocol::kAuto, 77) == 77);
  Protocol p = Protocol::kAuto;
  CHECK((parseProtocol("SIMPLE", &p) && p == Protocol::kSimple));
  CHECK((parseProtocol("LL", &p) && p == Protocol::kLL));
  CHECK((parseProtocol("ll128", &p) && p == Protocol::kLL128));
  CHECK_FALSE(parseProtocol("LL,Simple", &p));
  CHECK(protocolLineFlag(0) != 0);
  CHECK(protocolLineFlag(1) != protocolLineFlag(2));
}

TEST_CASE("protocol lines: every length round-trips; a line with another flag is named", "[protocol]") {
  for (Protocol protocol : {Protocol::kLL, Protocol::kLL128}) {
    for (size_t bytes = 0; bytes <= 600; ++bytes) {
      const std::vector<char> payload = payloadOf(bytes);
      std::vector<char> wire(protocolWireBytes(protocol, bytes), 'x');
      encodeProtocolLines(protocol, payload.data(), bytes, wire.data(), 0x1234567u);
      std::vector<char> back(bytes, 0);
      size_t bad = 99;
      REQUIRE(decodeProtocolLines(protocol, wire.data(), bytes, back.data(), 0x1234567u, &bad));
      REQUIRE(back == payload);
      if (bytes == 0) continue;
      // The flag of the last word (LL) or line (LL128) is corrupted: the decoder names it.
      const size_t last = protocol == Protocol::kLL ? (bytes - 1) / 4 : (bytes - 1) / 120;
      const size_t flagAt =
          protocol == Protocol::kLL ? 8 * last + (bytes - 4 * last < 4 ? bytes - 4 * last : 4) : 128 * last + 120;
      wire[flagAt] ^= 1;
      REQUIRE_FALSE(decodeProtocolLines(protocol, wire.data(), bytes, back.data(), 0x1234567u, &bad));
      REQUIRE(bad == last);
    }
  }
}

TEST_CASE("protocol framing: LL and LL128 messages between three ranks, every byte, counters count lines",
          "[protocol]") {
  const std::vector<size_t> sizes = {0, 1, 7, 8, 121, 4096, (64 << 10) + 5, 1 << 20};
  for (Protocol protocol : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    UniqueId id = mustCreateId();
    auto codes = runRanksInProcesses(
        3,
        [&](int rank) -> std::string {
          ShmOptions options;
          options.timeoutSeconds = 20;
          options.ringBytes = 64 << 10;
          auto connected = connectShmTransport(id, rank, 3, {true, true, true}, options);
          if (!connected.ok()) return connected.status().toString();
          std::unique_ptr<Transport> t = createProtocolFramingTransport(std::move(connected).value());
          t->setProtocol(protocol);
          ExpectedBytes payload(3);
          int msg = 0;
          const int rounds = 2;
          std::string bad = exchangeRounds(*t, sizes, rounds, Deadline::after(60), payload, &msg);
          if (!bad.empty()) return bad;
          uint64_t lines = 0;
          for (size_t s : sizes) lines += protocolWireBytes(protocol, s);
          ExpectedBytes wire(3);
          for (int peer = 0; peer < 3; ++peer) {
            if (peer == rank) continue;
            wire.sent[peer] = wire.received[peer] = rounds * lines;
          }
          return checkByteCounters(*t, wire);
        },
        90);
    CHECK(codes == std::vector<int>{0, 0, 0});
  }
}

TEST_CASE("protocol framing: a message sent as LL but received as Simple fails on both sides", "[protocol]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        ShmOptions options;
        options.timeoutSeconds = 10;
        auto connected = connectShmTransport(id, rank, 2, {true, true}, options);
        if (!connected.ok()) return connected.status().toString();
        std::unique_ptr<Transport> t = createProtocolFramingTransport(std::move(connected).value());
        std::vector<char> buffer = payloadOf(1024);
        Request req;
        if (rank == 0) {
          t->setProtocol(Protocol::kLL);
          Status posted = t->postSend(1, 5, buffer.data(), buffer.size(), &req);
          if (!posted.ok()) return posted.toString();
          Status waited = waitOne(*t, &req, Deadline::after(5));
          // The receiver refuses the message and ends its side: the sender fails or completes, never hangs.
          return waited.ok() || waited.code() != Code::kTimeout ? "" : "sender hung: " + waited.toString();
        }
        Status posted = t->postRecv(0, 5, buffer.data(), buffer.size(), &req);
        if (!posted.ok()) return posted.toString();
        Status waited = waitOne(*t, &req, Deadline::after(5));
        if (waited.ok()) return "the receive of a differently framed message succeeded";
        return waited.message().find("rank 0") != std::string::npos
                   ? ""
                   : "error does not name the sender: " + waited.message();
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace nshim
