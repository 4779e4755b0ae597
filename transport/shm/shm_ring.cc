// The shared-memory ring (shm_ring.h): a header of cache-line separated counters, then the data.
#include "transport/shm/shm_ring.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace nshim {

namespace {
constexpr uint64_t kMagic = 0x6e63636c73686d31ull;  // "ncclshm1"
constexpr uint32_t kProducerAttached = 1, kAborted = 2;
}  // namespace

struct ShmRing::Header {
  alignas(64) std::atomic<uint64_t> head;   // bytes written (producer)
  alignas(64) std::atomic<uint64_t> tail;   // bytes read (consumer)
  alignas(64) std::atomic<uint64_t> magic;  // set last by the consumer: the header is ready
  std::atomic<uint32_t> state;
  std::atomic<int32_t> producerPid;
  std::atomic<int32_t> consumerPid;
  uint64_t capacity;
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the ring needs lock-free 64-bit atomics");
constexpr size_t kDataOffset = 256;

ShmRing::ShmRing(std::string name, Header* header, size_t mappedBytes, bool consumer)
    : name_(std::move(name)), header_(header), data_(reinterpret_cast<char*>(header) + kDataOffset),
      mappedBytes_(mappedBytes), consumer_(consumer), nameLinked_(consumer) {}

ShmRing::~ShmRing() { reset(); }

ShmRing::ShmRing(ShmRing&& other) noexcept { *this = std::move(other); }

ShmRing& ShmRing::operator=(ShmRing&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    header_ = std::exchange(other.header_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    mappedBytes_ = std::exchange(other.mappedBytes_, 0);
    consumer_ = other.consumer_;
    nameLinked_ = std::exchange(other.nameLinked_, false);
  }
  return *this;
}

void ShmRing::reset() {
  if (nameLinked_) unlinkName();
  if (header_) ::munmap(header_, mappedBytes_);
  header_ = nullptr;
  data_ = nullptr;
}

Result<ShmRing> ShmRing::create(const std::string& name, size_t capacity) {
  if (capacity == 0 || (capacity & (capacity - 1)) != 0) {
    return NS_ERROR(Code::kInvalidArgument, "shared-memory ring {}: capacity {} is not a power of two", name, capacity);
  }
  ::shm_unlink(name.c_str());  // a stale segment of a crashed run with the same name
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "shm_open({}): {}", name, std::strerror(errno));
  const size_t bytes = kDataOffset + capacity;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    return NS_ERROR(Code::kSystemError, "{}: cannot size it to {} bytes ({}): is /dev/shm full?", name, bytes,
                    std::strerror(e));
  }
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    int e = errno;
    ::shm_unlink(name.c_str());
    return NS_ERROR(Code::kSystemError, "mmap of {} ({} bytes): {}", name, bytes, std::strerror(e));
  }
  auto* header = new (map) Header();
  header->head.store(0, std::memory_order_relaxed);
  header->tail.store(0, std::memory_order_relaxed);
  header->state.store(0, std::memory_order_relaxed);
  header->producerPid.store(0, std::memory_order_relaxed);
  header->consumerPid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
  header->capacity = capacity;
  header->magic.store(kMagic, std::memory_order_release);
  return ShmRing(name, header, bytes, true);
}

Result<ShmRing> ShmRing::open(const std::string& name, Deadline deadline) {
  while (true) {
    int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd >= 0) {
      struct stat st {};
      if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) > kDataOffset) {
        const size_t bytes = static_cast<size_t>(st.st_size);
        void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        if (map == MAP_FAILED) return NS_ERROR(Code::kSystemError, "mmap of {}: {}", name, std::strerror(errno));
        auto* header = static_cast<Header*>(map);
        if (header->magic.load(std::memory_order_acquire) == kMagic && header->capacity + kDataOffset == bytes) {
          header->producerPid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
          header->state.fetch_or(kProducerAttached, std::memory_order_acq_rel);
          return ShmRing(name, header, bytes, false);
        }
        ::munmap(map, bytes);  // created but not initialised yet
      } else {
        ::close(fd);
      }
    }
    if (deadline.expired()) {
      return NS_ERROR(Code::kTimeout, "shared-memory ring {} was not created by its receiver in time", name);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

size_t ShmRing::write(const void* data, size_t bytes) {
  // Published in pieces, so that the consumer copies one piece out while the next goes in.
  constexpr size_t kPublishBytes = 32 << 10;
  const size_t cap = header_->capacity;
  uint64_t head = header_->head.load(std::memory_order_relaxed);
  const uint64_t tail = header_->tail.load(std::memory_order_acquire);
  const size_t n = std::min(bytes, cap - static_cast<size_t>(head - tail));
  const char* from = static_cast<const char*>(data);
  for (size_t done = 0; done < n;) {
    const size_t at = static_cast<size_t>(head & (cap - 1));
    const size_t piece = std::min({n - done, cap - at, kPublishBytes});
    std::memcpy(data_ + at, from + done, piece);
    done += piece;
    head += piece;
    header_->head.store(head, std::memory_order_release);
  }
  return n;
}

size_t ShmRing::readable() const {
  return static_cast<size_t>(header_->head.load(std::memory_order_acquire) -
                             header_->tail.load(std::memory_order_relaxed));
}

void ShmRing::read(void* out, size_t bytes) {
  // Room is given back in pieces, so that the producer refills while the rest is copied out.
  constexpr size_t kReleaseBytes = 32 << 10;
  const size_t cap = header_->capacity;
  uint64_t tail = header_->tail.load(std::memory_order_relaxed);
  char* to = static_cast<char*>(out);
  for (size_t done = 0; done < bytes;) {
    const size_t at = static_cast<size_t>(tail & (cap - 1));
    const size_t piece = std::min({bytes - done, cap - at, kReleaseBytes});
    std::memcpy(to + done, data_ + at, piece);
    done += piece;
    tail += piece;
    header_->tail.store(tail, std::memory_order_release);
  }
}

bool ShmRing::producerAttached() const {
  return (header_->state.load(std::memory_order_acquire) & kProducerAttached) != 0;
}

void ShmRing::unlinkName() {
  if (!nameLinked_) return;
  ::shm_unlink(name_.c_str());
  nameLinked_ = false;
}

void ShmRing::raiseAbort() { header_->state.fetch_or(kAborted, std::memory_order_acq_rel); }

bool ShmRing::aborted() const { return (header_->state.load(std::memory_order_acquire) & kAborted) != 0; }

int ShmRing::peerPid() const {
  return consumer_ ? header_->producerPid.load(std::memory_order_relaxed)
                   : header_->consumerPid.load(std::memory_order_relaxed);
}

bool ShmRing::peerDied() const {
  const int pid = peerPid();
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace nshim
