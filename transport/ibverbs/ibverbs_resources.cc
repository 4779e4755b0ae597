// The deleters' helpers and the registered-memory buffer of the ibverbs transport.
#include "transport/ibverbs/ibverbs_resources.h"

#include <sys/mman.h>

#include <cstring>

#include "common/log.h"

namespace nshim {

const VerbsApi& verbsApi() {
  static const VerbsApi* api = [] {
    auto loaded = loadVerbs();
    return loaded.ok() ? loaded.value() : nullptr;
  }();
  return *api;  // objects to delete exist only if loading succeeded
}

namespace verbs_detail {
void destroyFailed(const char* what, int rc) {
  NS_WARN("ibverbs teardown: {} failed: {}", what, std::strerror(rc > 0 ? rc : errno));
}
}  // namespace verbs_detail

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

Result<PinnedBuffer> PinnedBuffer::allocate(size_t bytes) {
  PinnedBuffer buffer;
  if (bytes == 0) return buffer;
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return NS_ERROR(Code::kSystemError, "cannot map {} bytes for RDMA buffers: {}", bytes, std::strerror(errno));
  }
  // Registered pages must not be shared copy-on-write with a forked child (what ibv_fork_init does).
  (void)::madvise(memory, bytes, MADV_DONTFORK);
  buffer.data_ = static_cast<char*>(memory);
  buffer.size_ = bytes;
  return buffer;
}

}  // namespace nshim
