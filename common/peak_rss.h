// The process's peak resident memory so far (getrusage), for the memory figures phynet reports.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace nshim {

inline uint64_t peakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace nshim
