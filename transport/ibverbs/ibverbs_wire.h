// What travels on an ibverbs link: the fragment header at the start of each ring slot, the
// immediate data of every write and send (data sequence, credits, zero-copy offers), the offer
// itself, and the work request ids that route a completion back to its link.
#pragma once

#include <endian.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nshim::ib {

inline constexpr uint32_t kFragmentMagic = 0x4E534942;  // "NSIB"
inline constexpr size_t kFragmentHeaderBytes = 32;

// Little-endian in the slot, before the payload.
struct FragmentHeader {
  uint32_t magic = kFragmentMagic;
  uint32_t bytes = 0;  // payload bytes of this fragment
  uint64_t tag = 0;
  uint64_t total = 0;   // bytes of the whole message
  uint64_t offset = 0;  // of this fragment in the message

  void store(char* slot) const {
    uint32_t words[2] = {htole32(magic), htole32(bytes)};
    uint64_t longs[3] = {htole64(tag), htole64(total), htole64(offset)};
    std::memcpy(slot, words, 8);
    std::memcpy(slot + 8, longs, 24);
  }
  static FragmentHeader load(const char* slot) {
    FragmentHeader h;
    uint32_t words[2];
    uint64_t longs[3];
    std::memcpy(words, slot, 8);
    std::memcpy(longs, slot + 8, 24);
    h.magic = le32toh(words[0]);
    h.bytes = le32toh(words[1]);
    h.tag = le64toh(longs[0]);
    h.total = le64toh(longs[1]);
    h.offset = le64toh(longs[2]);
    return h;
  }
};

// Immediate data. The top bit marks a control message (on a link's outbound QP, from the peer):
// a credit carries the peer's count of freed slots, an offer (bit 30) the count of offers; a data
// write carries its sequence number, with bit 30 set when it went straight into the receiver's
// buffer (zero copy) rather than into a ring slot. Counters travel modulo 2^30.
inline constexpr uint32_t kCreditFlag = 0x80000000u;
inline constexpr uint32_t kOfferFlag = 0x40000000u;   // with kCreditFlag: an offer
inline constexpr uint32_t kDirectFlag = 0x40000000u;  // without kCreditFlag: a zero-copy write
inline constexpr uint32_t kSeqMask = 0x3fffffffu;

// An offer, sent by the receiver of every message of at least the zero-copy size: where the
// sender may write message `index` of the link (counted from 0 in posting order on both ends), or
// address 0 when the receive buffer is not registered. Little-endian in the landing buffer.
inline constexpr uint32_t kOfferMagic = 0x4E53524F;  // "NSRO"
inline constexpr size_t kOfferBytes = 40;
inline constexpr size_t kControlSlotBytes = 64;  // one offer landing or staging entry
struct Offer {
  uint64_t index = 0;
  uint64_t address = 0;  // 0: not registered, send through the ring
  uint32_t rkey = 0;
  uint64_t bytes = 0;
  uint64_t tag = 0;

  void store(char* out) const {
    uint32_t words[2] = {htole32(kOfferMagic), htole32(rkey)};
    uint64_t longs[4] = {htole64(index), htole64(address), htole64(bytes), htole64(tag)};
    std::memcpy(out, words, 8);
    std::memcpy(out + 8, longs, 32);
  }
  // False when the bytes are not an offer.
  static bool load(const char* in, Offer* offer) {
    uint32_t words[2];
    uint64_t longs[4];
    std::memcpy(words, in, 8);
    std::memcpy(longs, in + 8, 32);
    if (le32toh(words[0]) != kOfferMagic) return false;
    offer->rkey = le32toh(words[1]);
    offer->index = le64toh(longs[0]);
    offer->address = le64toh(longs[1]);
    offer->bytes = le64toh(longs[2]);
    offer->tag = le64toh(longs[3]);
    return true;
  }
};

// wr_id: the connection's index in the top 16 bits, a receive flag, a lane flag (the inbound QP),
// then the sequence number of a send work request, or a receive's index in the lane's receive list.
inline constexpr int kWrIdShift = 48;
inline constexpr uint64_t kWrIdRecv = uint64_t(1) << 47;
inline constexpr uint64_t kWrIdInbound = uint64_t(1) << 46;
inline constexpr uint64_t kWrIdSeqMask = kWrIdInbound - 1;
inline uint64_t makeWrId(size_t connection, bool inbound, uint64_t seq, bool isRecv) {
  return (uint64_t(connection) << kWrIdShift) | (isRecv ? kWrIdRecv : 0) | (inbound ? kWrIdInbound : 0) |
         (seq & kWrIdSeqMask);
}

}  // namespace nshim::ib
