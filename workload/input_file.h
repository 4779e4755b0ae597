// Reading an input file whole, or its first bytes, whether it is stored plain or gzip-compressed
// (PyTorch execution traces and Chakra ETs are often kept as .gz; PARAM's samples are). zlib reads
// both kinds alike. A limit bounds what is read (a hostile or huge file is refused with its size
// named, never read into memory unbounded).
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace nshim::workload {

// The largest input file read whole (after decompression).
constexpr size_t kMaxInputFileBytes = size_t{4} << 30;

// The whole (decompressed) content; an error naming the file when it cannot be read, is a damaged
// gzip stream, or holds more than `limit` bytes.
Result<std::string> readInputFile(const std::string& path, size_t limit = kMaxInputFileBytes);
// At most `bytes` first (decompressed) bytes; "" when the file cannot be read.
std::string readInputHead(const std::string& path, size_t bytes);
// True when the file starts with gzip's magic bytes.
bool isGzipFile(const std::string& path);

}  // namespace nshim::workload
