// A FIFO ring of pending operations for one direction of one connection. It grows by doubling when
// full and never shrinks, so after warm-up posting and completing allocate nothing.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace nshim {

template <typename T>
class OpRing {
 public:
  explicit OpRing(size_t capacity = 16) : slots_(capacity < 1 ? 1 : capacity) {}

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  T& front() { return slots_[head_]; }
  // The i-th element from the front.
  T& at(size_t i) { return slots_[(head_ + i) % slots_.size()]; }

  void push(const T& value) {
    if (count_ == slots_.size()) grow();
    slots_[(head_ + count_) % slots_.size()] = value;
    ++count_;
  }
  void pop() {
    head_ = (head_ + 1) % slots_.size();
    --count_;
  }
  void clear() {
    head_ = 0;
    count_ = 0;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(at(i));
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace nshim
