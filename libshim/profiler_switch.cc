// The one switch for NCCL's decisions: NCCLSHIM_PROFILER=1 makes the preloaded libncclshim.so its
// own NCCL profiler plugin by setting NCCL_PROFILER_PLUGIN to this library's path when the library
// is loaded (before main, so before NCCL reads it at its first communicator). An
// NCCL_PROFILER_PLUGIN already set is left as it is.
#include <dlfcn.h>
#include <stdlib.h>

#include "common/settings.h"
#include "libshim/nccl_profiler_abi.h"

extern "C" nshim::profiler_abi::ProfilerV5 ncclProfiler_v5;

namespace {

__attribute__((constructor)) void enableProfilerPlugin() {
  if (getenv("NCCL_PROFILER_PLUGIN") != nullptr) return;
  try {
    if (!nshim::settingBool(nshim::Setting::NCCLSHIM_PROFILER)) return;
  } catch (...) {
    return;  // out of memory reading it: the switch stays off
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ncclProfiler_v5), &info) != 0 && info.dli_fname != nullptr) {
    setenv("NCCL_PROFILER_PLUGIN", info.dli_fname, 0);
  }
}

}  // namespace
