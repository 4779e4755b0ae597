// A one-way byte stream between two processes of one host: a single-producer, single-consumer ring
// in a POSIX shared-memory segment (/dev/shm). The consumer creates the segment under a name both
// sides derive, the producer opens it; each side maps it and owns its mapping (RAII). Bytes are
// published with release/acquire on the head and tail counters, so neither side takes a lock or a
// syscall to move data. The header also carries both pids (to notice a peer that died) and an
// aborted flag either side may raise.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace nshim {

class ShmRing {
 public:
  // Consumer side: creates the segment `name` ("/..." as shm_open takes it) with room for
  // `capacity` bytes (a power of two), replacing a stale one of the same name.
  static Result<ShmRing> create(const std::string& name, size_t capacity);
  // Producer side: opens the segment once its consumer has created it, retrying until `deadline`.
  static Result<ShmRing> open(const std::string& name, Deadline deadline);

  ShmRing() = default;
  ~ShmRing();
  ShmRing(ShmRing&& other) noexcept;
  ShmRing& operator=(ShmRing&& other) noexcept;
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  // Producer: copies up to `bytes` from `data` into the ring; returns how many fit.
  size_t write(const void* data, size_t bytes);
  // Consumer: bytes ready to read, and reading them (copy out and release the room). Both sides
  // publish in 32 KiB pieces, so that one copies a piece while the other copies the next.
  size_t readable() const;
  void read(void* out, size_t bytes);

  // Whether the producer has opened the segment (the consumer may then remove its name).
  bool producerAttached() const;
  // Removes the segment's name (the mapping stays valid). The consumer does this once the producer
  // has attached, so that a crash later leaves nothing in /dev/shm.
  void unlinkName();

  void raiseAbort();
  bool aborted() const;
  // The other side's pid (0 while unknown): the producer's for the consumer and the reverse.
  int peerPid() const;
  // Whether the other side's process is gone (its pid no longer exists).
  bool peerDied() const;

  bool valid() const { return header_ != nullptr; }
  const std::string& name() const { return name_; }

 private:
  struct Header;
  ShmRing(std::string name, Header* header, size_t mappedBytes, bool consumer);
  void reset();

  std::string name_;
  Header* header_ = nullptr;
  char* data_ = nullptr;
  size_t mappedBytes_ = 0;
  bool consumer_ = false;
  bool nameLinked_ = false;
};

}  // namespace nshim
