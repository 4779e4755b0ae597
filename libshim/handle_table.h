// Handles the GPU-free backend hands out for objects the caller must not read (its communicators):
// not the object's address but a slot index and that slot's generation, so that a pointer the
// shim never handed out (garbage, a stack buffer, another library's object) or the handle of a
// destroyed object is recognised without reading through it, and stays dead when a new object
// takes the old one's slot or its memory. Lookups are lock-free: a tag check, a bounds check and two
// loads of one cache line; adding and removing (creation and destruction, rare) take a mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

namespace nshim {

class HandleTable {
 public:
  // `tag`: the low byte of every handle of this table (tells tables apart); `capacity`: live
  // objects at most, below 2^24.
  HandleTable(uint8_t tag, uint32_t capacity);
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // A new handle for `object` (not null); nullptr when `capacity` objects are live.
  void* add(void* object);
  // Ends `handle` (a no-op for one that is not live): find() of it returns nullptr from now on.
  void remove(const void* handle) noexcept;
  // The object of a live handle of this table; nullptr for anything else.
  void* find(const void* handle) const noexcept {
    const auto value = reinterpret_cast<uintptr_t>(handle);
    if ((value & 0xff) != tag_) return nullptr;
    const size_t index = (value >> 8) & 0xffffff;
    const auto generation = static_cast<uint32_t>(value >> 32);
    if (index >= capacity_ || (generation & 1) == 0) return nullptr;  // live generations are odd
    const Slot& slot = slots_[index];
    if (slot.generation.load(std::memory_order_acquire) != generation) return nullptr;
    void* object = slot.object.load(std::memory_order_acquire);
    // Removed (and perhaps reused) meanwhile: only a caller racing a destruction sees this.
    if (slot.generation.load(std::memory_order_acquire) != generation) return nullptr;
    return object;
  }

 private:
  struct Slot {
    std::atomic<uint32_t> generation{0};  // odd while live; advanced by every add and remove
    std::atomic<void*> object{nullptr};
  };

  const uintptr_t tag_;
  const uint32_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex mutex_;           // add, remove, free_, used_
  std::deque<uint32_t> free_;  // removed slots, oldest first: a slot's generations last longest
  uint32_t used_ = 0;          // slots ever used: [used_, capacity_) never were
};

}  // namespace nshim
