// Environment parameters (NCCLSHIM_*), read once and cached, with defaults. Malformed values are
// reported once as a warning and the default is used.
#pragma once

#include <cstdint>
#include <string>

namespace nshim {

std::string envString(const char* name, const std::string& fallback);
int64_t envInt(const char* name, int64_t fallback);
double envDouble(const char* name, double fallback);
// Size with optional K/M/G suffix (powers of two), e.g. "512K".
int64_t envBytes(const char* name, int64_t fallback);
// Parse "512K", "2M", "1G" or a plain number; -1 when malformed.
int64_t parseBytes(const std::string& text);

}  // namespace nshim
