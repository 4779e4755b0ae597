// HandleTable: slot allocation and handle encoding (generation << 32 | index << 8 | tag).
#include "libshim/handle_table.h"

namespace nshim {

HandleTable::HandleTable(uint8_t tag, uint32_t capacity)
    : tag_(tag), capacity_(capacity < (1u << 24) ? capacity : (1u << 24) - 1), slots_(new Slot[capacity_]) {}

void* HandleTable::add(void* object) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint32_t index;
  if (!free_.empty()) {
    index = free_.front();
    free_.pop_front();
  } else if (used_ < capacity_) {
    index = used_++;
  } else {
    return nullptr;
  }
  Slot& slot = slots_[index];
  uint32_t generation = slot.generation.load(std::memory_order_relaxed) + 1;  // dead (even) to live (odd)
  slot.object.store(object, std::memory_order_relaxed);
  slot.generation.store(generation, std::memory_order_release);
  return reinterpret_cast<void*>(uintptr_t{generation} << 32 | uintptr_t{index} << 8 | tag_);
}

void HandleTable::remove(const void* handle) noexcept {
  const auto value = reinterpret_cast<uintptr_t>(handle);
  const size_t index = (value >> 8) & 0xffffff;
  const auto generation = static_cast<uint32_t>(value >> 32);
  if ((value & 0xff) != tag_ || index >= capacity_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[index];
  if ((generation & 1) == 0 || slot.generation.load(std::memory_order_relaxed) != generation) return;
  slot.generation.store(generation + 1, std::memory_order_release);
  slot.object.store(nullptr, std::memory_order_relaxed);
  try {
    free_.push_back(static_cast<uint32_t>(index));
  } catch (...) {
    // Out of memory: the slot is never reused, which is safe.
  }
}

}  // namespace nshim
