// NCCL_IB_SPLIT_DATA_ON_QPS=1: how NCCL's IB transport cuts one request over the QPs of its
// connection. Every QP carries one part of ceil(ceil(bytes / qps) / 128) * 128 bytes (whole 128-byte
// blocks, which LL and LL128 need), the last ones what is left, possibly nothing: a QP with no data
// still posts its (empty) write, so the receiver sees one completion per QP.
#pragma once

#include <algorithm>
#include <cstddef>

namespace nshim::ib {

inline constexpr size_t kQpSplitAlignment = 128;

// Bytes of every part but the last non-empty one.
inline size_t qpSplitPartBytes(size_t bytes, int qps) {
  const size_t n = static_cast<size_t>(std::max(qps, 1));
  const size_t even = (bytes + n - 1) / n;
  return (even + kQpSplitAlignment - 1) / kQpSplitAlignment * kQpSplitAlignment;
}

// Offset and length of part `index` (0-based) of a message of `bytes` cut over `qps` QPs.
struct QpSplitPart {
  size_t offset = 0;
  size_t bytes = 0;
};
inline QpSplitPart qpSplitPart(size_t bytes, int qps, int index) {
  const size_t part = qpSplitPartBytes(bytes, qps);
  const size_t offset = std::min(bytes, part * static_cast<size_t>(index));
  return QpSplitPart{offset, std::min(part, bytes - offset)};
}

}  // namespace nshim::ib
