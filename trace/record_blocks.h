// RecordBlocks<T>: append-only storage for a reader that does not know how many records will come,
// moved at the end into one vector of exactly the right size. A growing std::vector holds up to
// three times its contents while it reallocates (old copy + doubled new one); here the extra memory
// is at most one block, because each block is mapped on its own (mmap, not malloc, which may keep
// freed memory) and unmapped as soon as take() has copied it out.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <vector>

namespace nshim::trace {

template <typename T>
class RecordBlocks {
  static_assert(std::is_trivially_copyable_v<T>, "blocks are raw memory");

 public:
  static constexpr size_t kBlockBytes = size_t(1) << 20;
  static constexpr size_t kPerBlock = kBlockBytes / sizeof(T);

  RecordBlocks() = default;
  RecordBlocks(const RecordBlocks&) = delete;
  RecordBlocks& operator=(const RecordBlocks&) = delete;
  ~RecordBlocks() { clear(); }

  size_t size() const { return size_; }

  void push_back(const T& value) {
    size_t inBlock = size_ % kPerBlock;
    if (inBlock == 0) {
      void* block = ::mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (block == MAP_FAILED) throw std::bad_alloc();
      blocks_.push_back(static_cast<T*>(block));
    }
    blocks_.back()[inBlock] = value;
    ++size_;
  }

  // Everything in order, in a vector of capacity size(); the blocks are released as they are copied.
  std::vector<T> take() {
    std::vector<T> out;
    out.reserve(size_);
    for (size_t b = 0; b < blocks_.size(); ++b) {
      size_t n = b + 1 < blocks_.size() ? kPerBlock : size_ - b * kPerBlock;
      out.insert(out.end(), blocks_[b], blocks_[b] + n);
      ::munmap(blocks_[b], kBlockBytes);
      blocks_[b] = nullptr;
    }
    blocks_.clear();
    size_ = 0;
    return out;
  }

  void clear() {
    for (T* block : blocks_) {
      if (block != nullptr) ::munmap(block, kBlockBytes);
    }
    blocks_.clear();
    size_ = 0;
  }

 private:
  std::vector<T*> blocks_;
  size_t size_ = 0;
};

}  // namespace nshim::trace
