// Algorithm names.
#include "collectives/algorithm.h"

namespace nshim {

const char* algorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kAuto: break;
  }
  return "auto";
}

bool parseAlgorithm(std::string_view text, Algorithm* out) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree}) {
    const std::string_view name = algorithmName(a);
    bool same = text.size() == name.size();
    for (size_t i = 0; same && i < text.size(); ++i) same = (text[i] | 0x20) == name[i];
    if (same) {
      *out = a;
      return true;
    }
  }
  return false;
}

}  // namespace nshim
