// The communicator side table: linear probing over kSlots atomic keys. A key is published with a
// release store after its state is written, so a lock-free reader that sees the key sees the state.
// Removed keys become tombstones (probes continue past them; inserts reuse them).
#include "libshim/comm_table.h"

#include <mutex>

#include "common/hot_section.h"
#include "common/log.h"

namespace nshim {
namespace {

constexpr size_t kSlots = 4096;  // live communicators per process, far above what jobs create
constexpr uintptr_t kEmpty = 0;
constexpr uintptr_t kTombstone = 1;

struct alignas(64) Slot {  // a lookup reads one line, not two (48 bytes would straddle half the time)
  std::atomic<uintptr_t> key{kEmpty};
  CommState state;
};

Slot gSlots[kSlots];
std::mutex gWriteMutex;  // inserts and removals
bool gFullWarned = false;

size_t slotOf(uintptr_t key) { return static_cast<size_t>(((key >> 4) * 0x9e3779b97f4a7c15ULL) >> 52) & (kSlots - 1); }

}  // namespace

NSHIM_HOT_CODE CommState* findComm(const void* comm) noexcept {
  uintptr_t key = reinterpret_cast<uintptr_t>(comm);
  if (key <= kTombstone) return nullptr;
  size_t at = slotOf(key);
  for (size_t probes = 0; probes < kSlots; ++probes, at = (at + 1) & (kSlots - 1)) {
    uintptr_t seen = gSlots[at].key.load(std::memory_order_acquire);
    if (seen == key) return &gSlots[at].state;
    if (seen == kEmpty) return nullptr;
  }
  return nullptr;
}

CommState* registerComm(const void* comm, uint64_t commId, int nranks, int rank) noexcept {
  uintptr_t key = reinterpret_cast<uintptr_t>(comm);
  if (key <= kTombstone) return nullptr;
  std::lock_guard<std::mutex> lock(gWriteMutex);
  Slot* target = nullptr;
  size_t at = slotOf(key);
  for (size_t probes = 0; probes < kSlots; ++probes, at = (at + 1) & (kSlots - 1)) {
    uintptr_t seen = gSlots[at].key.load(std::memory_order_relaxed);
    if (seen == key) {  // the address of a destroyed communicator, reused without a destroy we saw
      target = &gSlots[at];
      break;
    }
    if (seen == kTombstone && target == nullptr) target = &gSlots[at];
    if (seen == kEmpty) {
      if (target == nullptr) target = &gSlots[at];
      break;
    }
  }
  if (target == nullptr) {
    if (!gFullWarned) {
      NS_WARN("ncclshim: more than {} live communicators; new ones are recorded without a comm id", kSlots);
    }
    gFullWarned = true;
    return nullptr;
  }
  CommState& state = target->state;
  state.commId = commId;
  state.nranks.store(nranks, std::memory_order_relaxed);
  state.rank.store(rank, std::memory_order_relaxed);
  state.device.store(-1, std::memory_order_relaxed);
  state.nextSeq.store(0, std::memory_order_relaxed);
  state.nextSplit.store(0, std::memory_order_relaxed);
  target->key.store(key, std::memory_order_release);
  return &state;
}

void forgetComm(const void* comm) noexcept {
  uintptr_t key = reinterpret_cast<uintptr_t>(comm);
  if (key <= kTombstone) return;
  std::lock_guard<std::mutex> lock(gWriteMutex);
  size_t at = slotOf(key);
  for (size_t probes = 0; probes < kSlots; ++probes, at = (at + 1) & (kSlots - 1)) {
    uintptr_t seen = gSlots[at].key.load(std::memory_order_relaxed);
    if (seen == key) {
      gSlots[at].key.store(kTombstone, std::memory_order_release);
      return;
    }
    if (seen == kEmpty) return;
  }
}

}  // namespace nshim
