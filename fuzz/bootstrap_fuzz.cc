// libFuzzer target of the bootstrap wire formats (transport/bootstrap/bootstrap_messages.h): the same bytes
// are decoded as each message a socket peer can send — a rank's hello to the root, a peer hello, a
// peer acknowledgement, the root's reply header followed by its payload (error text or address
// table, checkRootReply / decodeRootTable). Accepted fixed-size messages must re-encode to the bytes
// they came from (reserved fields aside); an accepted reply never asks for more than the job's table.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "transport/bootstrap/bootstrap_messages.h"

using namespace nshim;
using namespace nshim::bootstrap;

namespace {

constexpr size_t kLongest = std::max({kRootHelloBytes, kPeerHelloBytes, kPeerAckBytes, kRootReplyBytes});

void rootHello(const uint8_t* in) {
  RootHello m;
  std::string why;
  if (!decode(in, &m, &why)) {
    FUZZ_CHECK(!why.empty());
    return;
  }
  uint8_t out[kRootHelloBytes];
  encode(m, out);
  FUZZ_CHECK(std::memcmp(out, in, sizeof(out)) == 0);
  // What the root checks before it trusts a hello's rank and address.
  if (m.nranks >= 1 && m.nranks <= kMaxRanks && m.rank < m.nranks) (void)SocketAddress::fromWire(m.listen);
}

void peerHello(const uint8_t* in) {
  PeerHello m;
  std::string why;
  if (!decode(in, &m, &why)) return;
  uint8_t out[kPeerHelloBytes];
  encode(m, out);
  FUZZ_CHECK(std::memcmp(out, in, sizeof(out)) == 0);
}

void peerAck(const uint8_t* in) {
  PeerAck m;
  std::string why;
  if (!decode(in, &m, &why)) return;
  uint8_t out[kPeerAckBytes];
  encode(m, out);
  FUZZ_CHECK(std::memcmp(out, in, 10) == 0 && std::memcmp(out + 12, in + 12, 4) == 0);  // bytes 10-11 reserved
}

// The reply as a rank of a job of `nranks` reads it: header, then at most the announced payload.
void rootReply(const uint8_t* in, const uint8_t* payload, size_t payloadSize, uint32_t nranks) {
  RootReplyHeader header;
  if (!decode(in, &header)) return;
  Result<size_t> bytes = checkRootReply(header, nranks);
  if (!bytes.ok()) return;
  FUZZ_CHECK(*bytes <= std::max<size_t>(kMaxErrorText, size_t{nranks} * SocketAddress::kWireBytes));
  if (header.kind != kRootTable || *bytes > payloadSize) return;
  Result<std::vector<SocketAddress>> table = decodeRootTable(payload, *bytes, nranks);
  if (table.ok()) FUZZ_CHECK(table->size() == nranks);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t in[kLongest] = {};
  std::memcpy(in, data, std::min(size, kLongest));
  rootHello(in);
  peerHello(in);
  peerAck(in);
  // The job size comes from the header itself (any nranks a rank could have) and from a fixed 4.
  RootReplyHeader header;
  const uint8_t* payload = data + std::min(size, kRootReplyBytes);
  const size_t payloadSize = size - std::min(size, kRootReplyBytes);
  if (decode(in, &header) && header.nranks >= 1 && header.nranks <= kMaxRanks) {
    rootReply(in, payload, payloadSize, header.nranks);
  }
  rootReply(in, payload, payloadSize, 4);
  return 0;
}
