// Where the profiler plugin's last task event read memory outside this library (its communicator
// context, the names NCCL passed, in NCCL's read-only data): a hint that the API frame prefetches
// at the start of the next recorded call of the thread (prefetchProfilerData), so that those lines
// come while NCCL works instead of one by one when the next task event reads them. Stale or
// foreign addresses are harmless: a prefetch never faults. Initial-exec TLS (no TLS call).
#pragma once

namespace nshim {

struct ProfilerHints {
  const void* context;     // the plugin's CommContext
  const char* names[3];    // NCCL's function, algorithm and protocol names
};

__attribute__((tls_model("initial-exec"))) inline constinit thread_local ProfilerHints tProfilerHints{};

inline void prefetchProfilerData() noexcept {
  const ProfilerHints& hints = tProfilerHints;
  if (hints.context == nullptr) return;
  __builtin_prefetch(hints.context, 0, 3);
  for (const char* name : hints.names) {
    if (name != nullptr) __builtin_prefetch(name, 0, 3);
  }
}

}  // namespace nshim
