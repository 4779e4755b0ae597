// FNV-1a, 64-bit: the one hash of the project's ids and digests (communicator ids, fingerprints,
// shared-memory segment names). Not for security.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nshim {

// FNV-1a 64 over bytes, continuing from `hash`.
inline uint64_t fnv1a64(const void* data, size_t len, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

}  // namespace nshim
