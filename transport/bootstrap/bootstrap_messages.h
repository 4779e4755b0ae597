// Wire formats of the bootstrap: fixed-size hellos (rank -> root, rank -> peer), the root's reply
// (the table of listen addresses, or an error text) and the peer's acknowledgement. All big-endian,
// all with explicit limits; decoders check magic, version and kind and never trust a length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/bootstrap/socket.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/bootstrap/wire.h"

namespace nshim::bootstrap {

inline constexpr uint32_t kMagic = 0x4E534253;  // "NSBS"
inline constexpr uint16_t kVersion = 1;
inline constexpr uint32_t kMaxRanks = 1u << 16;
inline constexpr uint32_t kMaxErrorText = 4096;
inline constexpr int kMaxSocketsPerPeer = 64;

enum Kind : uint16_t { kRootHello = 1, kRootTable = 2, kRootError = 3, kPeerHello = 4, kPeerAck = 5 };

// Rank -> root: who I am and where I listen.
struct RootHello {
  Secret secret{};
  uint32_t rank = 0;
  uint32_t nranks = 0;
  uint32_t timeoutMs = 0;
  uint8_t listen[SocketAddress::kWireBytes] = {};
};
inline constexpr size_t kRootHelloBytes = 4 + 2 + 2 + 16 + 4 + 4 + 4 + SocketAddress::kWireBytes;

// Root -> rank: a header, then nranks wire addresses (kRootTable) or an error text (kRootError).
struct RootReplyHeader {
  uint16_t kind = 0;
  uint16_t code = 0;  // nshim::Code of an error
  uint32_t nranks = 0;
  uint32_t length = 0;  // payload bytes
};
inline constexpr size_t kRootReplyBytes = 4 + 2 + 2 + 4 + 4;

// Rank -> higher rank, once per connection.
struct PeerHello {
  Secret secret{};
  uint32_t fromRank = 0;
  uint32_t toRank = 0;
  uint32_t socketIndex = 0;
  uint32_t socketsPerPeer = 0;
  uint32_t nranks = 0;
};
inline constexpr size_t kPeerHelloBytes = 4 + 2 + 2 + 16 + 5 * 4;

// Higher rank -> connecting rank: 0 = accepted; otherwise the value the acceptor expected.
enum AckCode : uint16_t { kAckOk = 0, kAckSocketsMismatch = 1, kAckNranksMismatch = 2 };
struct PeerAck {
  uint16_t code = kAckOk;
  uint32_t value = 0;
};
inline constexpr size_t kPeerAckBytes = 4 + 2 + 2 + 2 + 2 + 4;

inline void writePreamble(WireWriter& w, Kind kind) {
  w.u32(kMagic);
  w.u16(kVersion);
  w.u16(kind);
}

// Checks magic, version and kind; the text says what was wrong for the log.
inline bool readPreamble(WireReader& r, Kind kind, std::string* why) {
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t got = r.u16();
  if (!r.ok()) *why = "message too short";
  else if (magic != kMagic) *why = fmt::format("bad magic {:#010x}: not an ncclshim bootstrap peer", magic);
  else if (version != kVersion) *why = fmt::format("bootstrap protocol version {}, expected {}", version, kVersion);
  else if (got != kind) *why = fmt::format("message kind {}, expected {}", got, int(kind));
  else return true;
  return false;
}

inline void encode(const RootHello& m, uint8_t* out) {
  WireWriter w(out, kRootHelloBytes);
  writePreamble(w, kRootHello);
  w.bytes(m.secret.data(), m.secret.size());
  w.u32(m.rank);
  w.u32(m.nranks);
  w.u32(m.timeoutMs);
  w.bytes(m.listen, sizeof(m.listen));
}

inline bool decode(const uint8_t* in, RootHello* m, std::string* why) {
  WireReader r(in, kRootHelloBytes);
  if (!readPreamble(r, kRootHello, why)) return false;
  r.bytes(m->secret.data(), m->secret.size());
  m->rank = r.u32();
  m->nranks = r.u32();
  m->timeoutMs = r.u32();
  r.bytes(m->listen, sizeof(m->listen));
  return r.ok();
}

// The reply header's magic is checked here; the reader range-checks kind, count and length.
inline void encode(const RootReplyHeader& m, uint8_t* out) {
  WireWriter w(out, kRootReplyBytes);
  w.u32(kMagic);
  w.u16(m.kind);
  w.u16(m.code);
  w.u32(m.nranks);
  w.u32(m.length);
}

inline bool decode(const uint8_t* in, RootReplyHeader* m) {
  WireReader r(in, kRootReplyBytes);
  uint32_t magic = r.u32();
  m->kind = r.u16();
  m->code = r.u16();
  m->nranks = r.u32();
  m->length = r.u32();
  return r.ok() && magic == kMagic;
}

// The rest of the root's reply, parsed without sockets (bootstrap_messages.cc). checkRootReply
// checks a decoded header against the job before anything more is read: an error text of at most
// kMaxErrorText bytes, or a table of exactly `nranks` addresses; it returns the payload bytes that
// follow, or what is wrong with the header. decodeRootTable turns a table payload into addresses.
Result<size_t> checkRootReply(const RootReplyHeader& header, uint32_t nranks);
Result<std::vector<SocketAddress>> decodeRootTable(const uint8_t* payload, size_t bytes, uint32_t nranks);

inline void encode(const PeerHello& m, uint8_t* out) {
  WireWriter w(out, kPeerHelloBytes);
  writePreamble(w, kPeerHello);
  w.bytes(m.secret.data(), m.secret.size());
  w.u32(m.fromRank);
  w.u32(m.toRank);
  w.u32(m.socketIndex);
  w.u32(m.socketsPerPeer);
  w.u32(m.nranks);
}

inline bool decode(const uint8_t* in, PeerHello* m, std::string* why) {
  WireReader r(in, kPeerHelloBytes);
  if (!readPreamble(r, kPeerHello, why)) return false;
  r.bytes(m->secret.data(), m->secret.size());
  m->fromRank = r.u32();
  m->toRank = r.u32();
  m->socketIndex = r.u32();
  m->socketsPerPeer = r.u32();
  m->nranks = r.u32();
  return r.ok();
}

inline void encode(const PeerAck& m, uint8_t* out) {
  WireWriter w(out, kPeerAckBytes);
  writePreamble(w, kPeerAck);
  w.u16(m.code);
  w.u16(0);
  w.u32(m.value);
}

inline bool decode(const uint8_t* in, PeerAck* m, std::string* why) {
  WireReader r(in, kPeerAckBytes);
  if (!readPreamble(r, kPeerAck, why)) return false;
  m->code = r.u16();
  r.u16();
  m->value = r.u32();
  return r.ok();
}

}  // namespace nshim::bootstrap
