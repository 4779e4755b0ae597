// The 128-byte unique id of a GPU-free communicator (the role of ncclUniqueId): it names the
// bootstrap root (address and port of a listening socket in the process that created it) and carries
// a random 128-bit secret that every connection of the job must present.
//
// Layout (big-endian): magic u32 "NSID", version u16, reserved u16, root address in the 20-byte
// wire form of SocketAddress, secret 16 bytes, FNV-1a checksum u32 of the preceding 44 bytes, then
// zeros up to 128 bytes.
#pragma once

#include <array>
#include <cstdint>

#include "common/status.h"
#include "transport/bootstrap/socket.h"

namespace nshim {

struct UniqueId {
  char bytes[128];
};
static_assert(sizeof(UniqueId) == 128, "UniqueId must match ncclUniqueId");

using Secret = std::array<uint8_t, 16>;

struct UniqueIdInfo {
  SocketAddress root;
  Secret secret{};
};

inline constexpr uint32_t kUniqueIdMagic = 0x4E534944;  // "NSID"
inline constexpr uint16_t kUniqueIdVersion = 1;

// Validates and decodes an id from an untrusted source: magic, version, checksum, address family.
Result<UniqueIdInfo> decodeUniqueId(const UniqueId& id);
UniqueId encodeUniqueId(const UniqueIdInfo& info);

// A fresh random secret (getrandom, falling back to /dev/urandom).
Result<Secret> randomSecret();
// Compares without an early exit.
bool secretsEqual(const uint8_t* a, const uint8_t* b);

}  // namespace nshim
