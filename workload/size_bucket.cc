// Size buckets (size_bucket.h).
#include "workload/size_bucket.h"

#include <fmt/format.h>

namespace nshim::workload {

uint64_t sizeBucket(uint64_t bytes) {
  uint64_t bucket = 1;
  while (bucket < bytes && bucket < (uint64_t(1) << 62)) bucket <<= 1;
  return bucket;
}

std::string bucketName(uint64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T", "P"};
  int unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, units[unit]);
}

}  // namespace nshim::workload
