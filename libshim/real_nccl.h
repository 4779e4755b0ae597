// The real NCCL behind the shim: the table of its API functions (nccl_functions.h), resolved once
// at the first call that needs it (the shim is loaded before NCCL is). Where it is looked for:
//   1. dlsym(RTLD_NEXT, name): NCCL linked by the program (the next definition after the shim);
//   2. dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD) + dlsym: NCCL already loaded RTLD_LOCAL, as
//      PyTorch loads it (libtorch_cuda.so); RTLD_NEXT cannot see it there;
//   3. dlopen($NCCLSHIM_REAL_NCCL): an explicit path, for a process that has not loaded NCCL yet.
// A symbol that resolves into libncclshim.so itself is never used.
#pragma once

#include <string>

#include "libshim/nccl_functions.h"

namespace nshim {

struct RealNccl {
  NcclFunctions functions;  // nullptr for each function it lacks (every one when not found)
  bool found = false;
  std::string path;     // the library's file (dladdr)
  std::string source;   // how it was found, e.g. "dlopen(libnccl.so.2, RTLD_NOLOAD)"
  std::string tried;    // not found: each way tried and why it failed
  std::string missing;  // found: the API functions it lacks (older NCCL), space separated
};

// Resolved once, thread-safe; every call returns the same table.
const RealNccl& realNccl();

}  // namespace nshim
