// Per-socket state of the TCP transport: the 24-byte message header, the pending operations of
// each direction (per-peer state: transport/core/peer_link.h). A message travels as one part (its
// header and payload on the connection's control socket) or, with data sockets
// (nccl_socket_settings.h), as a header-only part on the control socket and payload tasks on the
// data sockets.
#pragma once

#include <endian.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "common/status.h"
#include "transport/core/op_ring.h"
#include "transport/core/peer_link.h"
#include "transport/core/transport.h"

namespace nshim::tcp {

inline constexpr uint32_t kMessageMagic = 0x4E534D47;  // "NSMG"
inline constexpr size_t kHeaderBytes = 24;             // magic u32, reserved u32, tag u64, length u64

// Little-endian on the wire (free on x86 and Arm).
inline void encodeHeader(uint8_t* out, uint64_t tag, uint64_t length) {
  uint32_t magic = htole32(kMessageMagic), reserved = 0;
  uint64_t leTag = htole64(tag), leLength = htole64(length);
  std::memcpy(out, &magic, 4);
  std::memcpy(out + 4, &reserved, 4);
  std::memcpy(out + 8, &leTag, 8);
  std::memcpy(out + 16, &leLength, 8);
}

// A message cut into parts (a header on the control socket, tasks on the data sockets): counts
// its parts down from whichever thread finishes them (the waiting thread, socket helpers), so that
// the message completes once, or fails once, and frees itself with its last part.
class SplitMessage {
 public:
  explicit SplitMessage(int parts) : left_(parts) {}
  // A part moved all its bytes. True when the message is complete now (its last part, none failed).
  bool partDone() {
    if (left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
    const bool failed = failed_.load(std::memory_order_acquire);  // every other part has counted down
    delete this;
    return !failed;
  }
  // A part failed. True the first time: the caller fails the message.
  bool partFailed() {
    const bool first = !failed_.exchange(true, std::memory_order_acq_rel);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    return first;
  }

 private:
  std::atomic<int> left_;
  std::atomic<bool> failed_{false};
};

struct Op {
  Request* req = nullptr;
  char* buf = nullptr;            // this part's payload
  size_t length = 0;              // this part's payload bytes
  bool header = true;             // the part starts with the message's header (the control socket's part)
  SplitMessage* split = nullptr;  // one of several parts of its message
  size_t progressed = 0;          // header + payload bytes moved so far

  size_t total() const { return (header ? kHeaderBytes : 0) + length; }
};

struct Channel {
  int fd = -1;
  int peer = -1;
  int index = 0;
  OpRing<Op> sends;
  OpRing<Op> recvs;
  uint8_t txHeader[kHeaderBytes] = {};
  uint8_t rxHeader[kHeaderBytes] = {};
  bool listed = false;  // in the active list
};

// Decodes a received header; false when the magic is wrong.
inline bool decodeHeader(const uint8_t* in, uint32_t* magic, uint64_t* tag, uint64_t* length) {
  std::memcpy(magic, in, 4);
  std::memcpy(tag, in + 8, 8);
  std::memcpy(length, in + 16, 8);
  *magic = le32toh(*magic);
  *tag = le64toh(*tag);
  *length = le64toh(*length);
  return *magic == kMessageMagic;
}

}  // namespace nshim::tcp
