// A buffer whose virtual size is large but whose memory is small: `physical` bytes mapped again and
// again over the whole range, so that byte i and byte i + physical are the same byte. A replay that
// does not check data moves each op's bytes through it the way NCCL's proxy moves them through its
// staging buffers (NCCL_BUFFSIZE per connection): the socket copies touch a cache-sized region, not
// the op's whole buffer (docs/socket_transport.md). Owns the mapping (RAII).
#pragma once

#include <cstddef>

#include "common/status.h"

namespace nshim::phynet {

class AliasedMemory {
 public:
  AliasedMemory() = default;
  ~AliasedMemory();
  AliasedMemory(AliasedMemory&& other) noexcept;
  AliasedMemory& operator=(AliasedMemory&& other) noexcept;
  AliasedMemory(const AliasedMemory&) = delete;
  AliasedMemory& operator=(const AliasedMemory&) = delete;

  // At least `bytes` of address space backed by `physical` bytes (both rounded up to pages; the
  // range to a multiple of the physical size), zero-filled and touched (mapped before timing).
  static Result<AliasedMemory> create(size_t bytes, size_t physical);

  char* data() const { return base_; }
  size_t size() const { return size_; }
  size_t physical() const { return physical_; }

 private:
  void release();

  char* base_ = nullptr;
  size_t size_ = 0;
  size_t physical_ = 0;
};

}  // namespace nshim::phynet
