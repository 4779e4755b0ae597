// Text for hand-written JSON: a string literal with quotes, backslashes and control characters
// escaped (the reports, the page generator's side files).
#pragma once

#include <string>

namespace nshim {

std::string jsonQuoted(const std::string& text);

}  // namespace nshim
