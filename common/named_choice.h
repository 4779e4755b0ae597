// Reading a choice by name (an enum with a name function), in any case: NCCL writes "RING",
// "Simple", "LL128"; the options and reports use lower case.
#pragma once

#include <initializer_list>
#include <string_view>

namespace nshim {

template <typename Choice>
bool parseNamedChoice(std::string_view text, std::initializer_list<Choice> choices, const char* (*nameOf)(Choice),
                      Choice* out) {
  for (Choice choice : choices) {
    const std::string_view name = nameOf(choice);
    bool same = text.size() == name.size();
    for (size_t i = 0; same && i < text.size(); ++i) same = (text[i] | 0x20) == (name[i] | 0x20);
    if (same) {
      *out = choice;
      return true;
    }
  }
  return false;
}

}  // namespace nshim
