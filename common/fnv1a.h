// FNV-1a, 64-bit: the one hash of the project's ids and digests (communicator ids, fingerprints,
// shared-memory segment names, the unique id's checksum). Not for security.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nshim {

inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ull;

// FNV-1a 64 over bytes, continuing from `hash`.
inline uint64_t fnv1a64(const void* data, size_t len, uint64_t hash = kFnv1a64Basis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

// FNV-1a 32 over bytes (the unique id's checksum).
inline uint32_t fnv1a32(const void* data, size_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < len; ++i) hash = (hash ^ p[i]) * 16777619u;
  return hash;
}

}  // namespace nshim
