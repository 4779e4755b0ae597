// The registry of ncclMemAlloc's host allocations (host_allocations.h).
#include "libshim/host_allocations.h"

#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace nshim {
namespace {

struct Allocations {
  std::mutex mutex;
  std::unordered_set<void*> live;
};

Allocations& allocations() {
  static Allocations* all = new Allocations();  // never destroyed: frees may come from atexit handlers
  return *all;
}

}  // namespace

Result<void*> allocateHostMemory(size_t size) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, size > 0 ? size : 1) != 0) {
    return NS_ERROR(Code::kSystemError, "cannot allocate {} bytes of host memory", size);
  }
  Allocations& all = allocations();
  try {
    std::lock_guard<std::mutex> lock(all.mutex);
    all.live.insert(memory);
  } catch (...) {
    std::free(memory);
    return NS_ERROR(Code::kSystemError, "out of host memory recording an allocation of {} bytes", size);
  }
  return memory;
}

Status freeHostMemory(void* pointer) {
  if (pointer == nullptr) return Status::Ok();
  Allocations& all = allocations();
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    if (all.live.erase(pointer) == 0) {
      return NS_ERROR(Code::kInvalidArgument, "ptr {} was not returned by ncclMemAlloc, or was freed already", pointer);
    }
  }
  std::free(pointer);
  return Status::Ok();
}

}  // namespace nshim
