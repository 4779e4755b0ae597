// Fresh communicator ids (comm_id.h): unique per call within a process and, through the pid and the
// time, across the processes of a job.
#include "trace/comm_id.h"

#include <unistd.h>

#include <atomic>

#include "common/clock.h"

namespace nshim::trace {

uint64_t freshCommId() noexcept {
  static std::atomic<uint64_t> counter{0};
  const uint64_t seed[3] = {static_cast<uint64_t>(getpid()), static_cast<uint64_t>(nowNs()),
                            counter.fetch_add(1, std::memory_order_relaxed)};
  return detail::nonZeroCommId(fnv1a64(seed, sizeof(seed)));
}

}  // namespace nshim::trace
