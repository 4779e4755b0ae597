// Communicator ids: the 64-bit name of a communicator, equal on all its members and never 0 (0 means
// "no communicator"). Traces record them (FORMAT.md, "Communicator id"), the shim's side table and
// its GPU-free communicators take them from here, so logs and traces name a communicator alike.
// One rule for each way a communicator comes to be:
//   - from unique ids (ncclCommInitRank*): FNV-1a 64 over the ids' bytes;
//   - split (or shrunk) from a parent: FNV-1a 64 over the parent's id (8 bytes little endian), the
//     color (int32, 4 bytes little endian) and the parent's split sequence number (8 bytes little
//     endian); equal on all members because the split is collective over the parent;
//   - every member in this process (ncclCommInitAll): a fresh id for each call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/fnv1a.h"

namespace nshim::trace {

namespace detail {
inline uint64_t nonZeroCommId(uint64_t id) { return id != 0 ? id : 1; }
}  // namespace detail

// A communicator created from unique ids: all `bytes` of them (128 a unique id).
inline uint64_t commIdFromUniqueId(const void* uniqueIds, size_t bytes) {
  return detail::nonZeroCommId(fnv1a64(uniqueIds, bytes));
}

// A communicator split from `parentId` with `color`, the parent's split number `splitSeq` (from 0).
inline uint64_t commIdForSplit(uint64_t parentId, int32_t color, uint64_t splitSeq) {
  unsigned char bytes[20];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(parentId >> (8 * i));
  const uint32_t c = static_cast<uint32_t>(color);
  for (int i = 0; i < 4; ++i) bytes[8 + i] = static_cast<unsigned char>(c >> (8 * i));
  for (int i = 0; i < 8; ++i) bytes[12 + i] = static_cast<unsigned char>(splitSeq >> (8 * i));
  return detail::nonZeroCommId(fnv1a64(bytes, sizeof(bytes)));
}

// A communicator whose members are all in this process: FNV-1a 64 over the pid, the time and a
// per-process counter, so that no two calls give the same id.
uint64_t freshCommId() noexcept;

}  // namespace nshim::trace
