// JSON string literals (json_text.h).
#include "common/json_text.h"

#include <fmt/format.h>

namespace nshim {

std::string jsonQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else out += c;
  }
  return out + "\"";
}

}  // namespace nshim
