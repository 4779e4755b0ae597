// RecordRing: the per-thread single-producer / single-consumer buffer of the recorder. The owning
// thread pushes fixed-size slots with two atomic stores and no syscall; the writer (or a flush, under
// the recorder's drain lock) consumes. Reference counted by its two owners: the thread (released
// at thread exit, which marks it orphaned) and the recorder (released when it reclaims it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "trace/trace_record.h"

namespace nshim::trace {

enum class SlotKind : uint32_t { kComm = 1, kOp = 2, kTask = 3, kProxy = 4, kStep = 5 };

struct RingSlot {
  // The writer's merge key: the record's end time (CLOCK_MONOTONIC; its line's t_end_ns, a comm
  // line's t_ns; held tasks take their call's). The writer merges the threads' rings by it, each ring
  // in its own order, and numbers the lines (`n`) as it writes them: no recorder-wide counter for a
  // push to take (its atomic add, a locked instruction, waited at every push for all the stores
  // the job had in flight, the CUDA driver's included) and no clock read.
  uint64_t key;
  SlotKind kind;
  uint32_t reserved;
  union {
    CommRecord comm;
    OpRecord op;
    TaskRecord task;
    ProxyRecord proxy;
    StepRecord step;
  };
};

class RecordRing {
 public:
  // capacity is rounded up to a power of two (at least 16).
  RecordRing(uint64_t recorderId, uint64_t threadToken, uint32_t capacity)
      : recorderId_(recorderId), threadToken_(threadToken) {
    static_assert(sizeof(std::atomic<uint64_t>) + 2 * sizeof(uint64_t) + sizeof(slots_) <= 64);
    uint64_t cap = 16;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    slots_.reset(new RingSlot[cap]);
  }
  RecordRing(const RecordRing&) = delete;
  RecordRing& operator=(const RecordRing&) = delete;

  uint64_t recorderId() const { return recorderId_; }
  uint64_t threadToken() const { return threadToken_; }
  uint64_t capacity() const { return mask_ + 1; }

  // Producer: a slot to fill, or nullptr when full (after re-reading the consumer position).
  RingSlot* reserve() { return hasRoom(1) ? slotFromHead(0) : nullptr; }
  void publish() { publish(1); }
  // Producer, several records at once: whether `count` slots are free; the i-th slot from the head
  // to fill; then publish(count) makes all of them visible together.
  bool hasRoom(uint64_t count) {
    uint64_t h = head_.load(std::memory_order_relaxed);
    if (h + count - cachedTail_ > mask_ + 1) {
      cachedTail_ = tail_.load(std::memory_order_acquire);
      if (h + count - cachedTail_ > mask_ + 1) return false;
    }
    return true;
  }
  RingSlot* slotFromHead(uint64_t i) { return &slots_[(head_.load(std::memory_order_relaxed) + i) & mask_]; }
  void publish(uint64_t count) {
    head_.store(head_.load(std::memory_order_relaxed) + count, std::memory_order_release);
  }
  // Producer: at least 3/4 of the ring is in use (re-reads the consumer position only when the
  // cached one says so, so a drained ring stops asking for the writer).
  bool checkNearlyFull() {
    uint64_t h = head_.load(std::memory_order_relaxed);
    uint64_t threshold = (mask_ + 1) / 4 * 3;
    if (h - cachedTail_ < threshold) return false;
    cachedTail_ = tail_.load(std::memory_order_acquire);
    return h - cachedTail_ >= threshold;
  }
  void countDrop() { drops_.fetch_add(1, std::memory_order_relaxed); }
  // Producer, a hint (Recorder::prefetchPush): the lines the next push reads and writes here.
  void prefetchProducer() const { __builtin_prefetch(&head_, 1, 3); }  // and mask_, slots_

  // Consumer (under the drain lock).
  uint64_t readHead() const { return head_.load(std::memory_order_acquire); }
  uint64_t readTail() const { return tail_.load(std::memory_order_relaxed); }
  const RingSlot& slotAt(uint64_t index) const { return slots_[index & mask_]; }
  void consumeTo(uint64_t index) { tail_.store(index, std::memory_order_release); }
  uint64_t drops() const { return drops_.load(std::memory_order_relaxed); }
  // Fork child: the slots hold the parent's records, which the parent writes.
  void discardAll() { tail_.store(head_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

  bool orphaned() const { return orphaned_.load(std::memory_order_acquire); }
  void markOrphaned() { orphaned_.store(true, std::memory_order_release); }
  bool onlyOneOwner() const { return refs_.load(std::memory_order_acquire) == 1; }
  // Drops one owner's reference; deletes the ring with the last one.
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  ~RecordRing() = default;

  // What a push reads and writes, on one line: the producer's position and its copy of the
  // consumer's, the slots (fixed once made).
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer
  uint64_t cachedTail_ = 0;                    // producer's copy of tail_
  uint64_t mask_ = 0;
  std::unique_ptr<RingSlot[]> slots_;
  const uint64_t recorderId_;
  const uint64_t threadToken_;
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
  alignas(64) std::atomic<uint64_t> drops_{0};
  std::atomic<bool> orphaned_{false};
  std::atomic<int> refs_{2};
};

}  // namespace nshim::trace
