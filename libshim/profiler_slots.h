// Preallocated slots for the profiler plugin's live events (profiler_plugin.cc). NCCL keeps the
// handle a plugin returns and hands it back on stop / state / as a child's parent; ours are not
// pointers but tickets: (ticket + 1) << 3 | kind, where the ticket is a pool-wide counter taken
// with one atomic add and names slot ticket % N. A slot remembers the ticket it holds, so a handle
// whose slot was reused (more than N live events of a kind) is recognised and ignored instead of
// read as another event. No lock, no allocation, no syscall.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nshim::profiler {

// kTimedStep: a proxy step in the step log (profiler_step_log.h, NCCLSHIM_PROFILER_STEPS), ticket = its entry.
enum class HandleKind : uintptr_t { kNone = 0, kApi = 1, kTask = 2, kProxyOp = 3, kProxyStep = 4, kTimedStep = 5 };

inline void* makeHandle(HandleKind kind, uint64_t ticket) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(((ticket + 1) << 3) | static_cast<uintptr_t>(kind)));
}
inline HandleKind handleKind(const void* handle) {
  uintptr_t v = reinterpret_cast<uintptr_t>(handle);
  return v < 8 ? HandleKind::kNone : static_cast<HandleKind>(v & 7);
}
inline uint64_t handleTicket(const void* handle) { return (reinterpret_cast<uintptr_t>(handle) >> 3) - 1; }

template <typename Payload, size_t N>
class SlotPool {
  static_assert((N & (N - 1)) == 0, "N must be a power of two");

 public:
  // A new ticket and its slot's payload to fill; publish(ticket) makes it findable.
  // The slot stops answering for the event it held before the payload is overwritten.
  uint64_t claim() noexcept {
    uint64_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
    slots_[ticket & (N - 1)].held.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    return ticket;
  }
  Payload& payload(uint64_t ticket) noexcept { return slots_[ticket & (N - 1)].payload; }
  void publish(uint64_t ticket) noexcept { slots_[ticket & (N - 1)].held.store(ticket + 1, std::memory_order_release); }
  // The payload of `ticket`, or nullptr when its slot now holds another event.
  Payload* find(uint64_t ticket) noexcept {
    Slot& slot = slots_[ticket & (N - 1)];
    return slot.held.load(std::memory_order_acquire) == ticket + 1 ? &slot.payload : nullptr;
  }
  // Copies the payload of `ticket` (checked before and after the copy); false when reused.
  bool read(uint64_t ticket, Payload* out) noexcept {
    Slot& slot = slots_[ticket & (N - 1)];
    if (slot.held.load(std::memory_order_acquire) != ticket + 1) return false;
    *out = slot.payload;
    std::atomic_thread_fence(std::memory_order_acquire);
    return slot.held.load(std::memory_order_relaxed) == ticket + 1;
  }
  // Writes every slot once (as claim() will), so that the pool's pages are in memory before NCCL's
  // threads claim them. Call before any event: not concurrent with claims.
  void prefault() noexcept {
    for (Slot& slot : slots_) slot.held.store(0, std::memory_order_relaxed);
  }
  // Marks the slot free for reuse (its ticket no longer found).
  void retire(uint64_t ticket) noexcept {
    uint64_t expected = ticket + 1;
    slots_[ticket & (N - 1)].held.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  }

 private:
  struct Slot {
    std::atomic<uint64_t> held{0};  // ticket + 1 of the event in the slot, 0 when none
    Payload payload{};
  };
  alignas(64) std::atomic<uint64_t> next_{0};
  Slot slots_[N];
};

}  // namespace nshim::profiler
