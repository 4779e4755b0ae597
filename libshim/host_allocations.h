// The host memory ncclMemAlloc handed out GPU-free, so that ncclMemFree refuses a pointer it did not
// return (a stack buffer, an address inside an allocation, one freed already) with an error instead
// of handing it to free(). Not on the hot path: a mutex and a hash set.
#pragma once

#include <cstddef>

#include "common/status.h"

namespace nshim {

// Page-aligned host memory of `size` bytes (at least one byte), remembered for freeHostMemory.
Result<void*> allocateHostMemory(size_t size);
// Frees memory from allocateHostMemory; an error naming `pointer` for anything else (null is freed
// as nothing).
Status freeHostMemory(void* pointer);

}  // namespace nshim
