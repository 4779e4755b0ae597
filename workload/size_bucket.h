// The size buckets the reports and the tools group operations by: powers of two, named "512B",
// "64K", "1M".
#pragma once

#include <cstdint>
#include <string>

namespace nshim::workload {

// The smallest power of two >= bytes (1 for 0).
uint64_t sizeBucket(uint64_t bytes);

// "512B", "64K", "1M", "2G" (powers of two).
std::string bucketName(uint64_t bytes);

}  // namespace nshim::workload
