// Algorithm names.
#include "model/algorithm.h"

#include "common/named_choice.h"

namespace nshim {

const char* algorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kPat: return "pat";
    case Algorithm::kAuto: break;
  }
  return "auto";
}

bool parseAlgorithm(std::string_view text, Algorithm* out) {
  return parseNamedChoice(text, {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kPat}, algorithmName,
                          out);
}

}  // namespace nshim
