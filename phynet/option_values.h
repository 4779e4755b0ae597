// The values of phynet's options, read or refused (common/command_line.h's refuseValue: the message
// names the option and the value): numbers in a range, lists, sizes, --delay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phynet/replay_options.h"

namespace nshim::phynet {

// Comma-separated words, lowercased; empty words left out.
std::vector<std::string> splitList(const std::string& text);
// A number in [low, high]; "NAME: 'TEXT' is not a number in [LOW, HIGH]" otherwise.
double parseNumber(const std::string& name, const std::string& text, double low, double high);
// An integer in [low, high].
int parseInt(const std::string& name, const std::string& text, int low, int high);
// A size like 64M of at least 4K; "NAME: 'TEXT' (ACCEPTED)" otherwise.
int64_t parseSize(const std::string& name, const std::string& text, const char* accepted);
// --delay RANK[,RANK...]:MICROSECONDS[:EVERY] into options->delay*.
void parseDelay(const std::string& text, ReplayOptions* options);

}  // namespace nshim::phynet
