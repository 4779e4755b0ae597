// How an op's elements are cut into parts (channels, blocks) and positions counted around a ring:
// shared by the algorithms and the traffic model, so that both cut alike.
#pragma once

#include <cstddef>

namespace nshim {

// Elements [begin, end) of part `index` when `total` elements are cut into `parts` nearly equal
// parts of ceil(total/parts) (the last ones may be shorter or empty).
struct Range {
  size_t begin;
  size_t end;
  size_t size() const { return end - begin; }
};
Range partRange(size_t total, int parts, int index);

inline int ringMod(int value, int n) { return ((value % n) + n) % n; }

}  // namespace nshim
