// Parts of an op's elements (part_range.h).
#include "model/part_range.h"

#include <algorithm>

namespace nshim {

Range partRange(size_t total, int parts, int index) {
  size_t per = (total + parts - 1) / parts;
  size_t begin = std::min(total, per * static_cast<size_t>(index));
  size_t end = std::min(total, begin + per);
  return Range{begin, end};
}

}  // namespace nshim
