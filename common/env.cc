// Environment parameter parsing with caching: each variable is parsed the first time it is asked
// for; later calls return the cached value under a lock-free read after initialisation.
#include "common/env.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "common/log.h"
#include "common/nccl_env.h"

namespace nshim {
namespace {

std::mutex gEnvMutex;
std::map<std::string, std::string>& cache() {
  static std::map<std::string, std::string> values;
  return values;
}

// Returns true and the raw value when the variable is set and non-empty. NCCL's own variables
// come from ncclVariable (the environment, else a replayed capture's value), uncached: a replay
// installs the capture's values after start-up.
bool lookup(const char* name, std::string* out) {
  if (std::string_view(name).substr(0, 5) == "NCCL_") {
    std::optional<std::string> value = ncclVariable(name);
    *out = value.value_or("");
    return !out->empty();
  }
  std::lock_guard<std::mutex> lock(gEnvMutex);
  auto it = cache().find(name);
  if (it == cache().end()) {
    const char* raw = std::getenv(name);
    it = cache().emplace(name, raw ? raw : "").first;
  }
  *out = it->second;
  return !out->empty();
}

}  // namespace

std::string envString(const char* name, const std::string& fallback) {
  std::string value;
  return lookup(name, &value) ? value : fallback;
}

int64_t envInt(const char* name, int64_t fallback) {
  std::string value;
  if (!lookup(name, &value)) return fallback;
  char* end = nullptr;
  long long parsed = std::strtoll(value.c_str(), &end, 0);
  if (end == value.c_str() || *end != '\0') {
    NS_WARN("ignoring {}={}: not an integer; using {}", name, value, fallback);
    return fallback;
  }
  return parsed;
}

double envDouble(const char* name, double fallback) {
  std::string value;
  if (!lookup(name, &value)) return fallback;
  char* end = nullptr;
  double parsed = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0') {
    NS_WARN("ignoring {}={}: not a number; using {}", name, value, fallback);
    return fallback;
  }
  return parsed;
}

int64_t parseBytes(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || number < 0) return -1;
  int64_t scale = 1;
  switch (*end) {
    case '\0': break;
    case 'k':
    case 'K':
      scale = 1LL << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      scale = 1LL << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      scale = 1LL << 30;
      ++end;
      break;
    default: return -1;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return -1;
  return static_cast<int64_t>(number * static_cast<double>(scale));
}

int64_t envBytes(const char* name, int64_t fallback) {
  std::string value;
  if (!lookup(name, &value)) return fallback;
  int64_t parsed = parseBytes(value);
  if (parsed < 0) {
    NS_WARN("ignoring {}={}: not a size like 512K or 2M; using {}", name, value, fallback);
    return fallback;
  }
  return parsed;
}

}  // namespace nshim
