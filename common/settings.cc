// The settings table (settings_list.h) and reading through it: parsing by kind with range checks,
// the validation pass of the entry points, and the accessors.
#include "common/settings.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/log.h"

extern char** environ;

namespace nshim {
namespace {

constexpr SettingDecl kTable[] = {
#define NS_SETTING(name, kind, defaultText, min, max, options, help) \
  {Setting::name, #name, SettingKind::kind, defaultText, min, max, options, help},
#include "common/settings_list.h"
#undef NS_SETTING
};
constexpr size_t kCount = sizeof(kTable) / sizeof(kTable[0]);

constexpr bool tableInEnumOrder() {
  for (size_t i = 0; i < kCount; ++i) {
    if (static_cast<size_t>(kTable[i].id) != i) return false;
  }
  return true;
}
static_assert(tableInEnumOrder());

bool sameIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool hasOption(const SettingDecl& decl, std::string_view option) {
  std::string_view options = decl.options;
  for (size_t at = 0; at <= options.size();) {
    size_t end = options.find(' ', at);
    if (end == std::string_view::npos) end = options.size();
    if (options.substr(at, end - at) == option) return true;
    at = end + 1;
  }
  return false;
}

// The choices of a kChoice declaration: each a list of spellings, its name first.
std::vector<std::vector<std::string_view>> choicesOf(const SettingDecl& decl) {
  std::vector<std::vector<std::string_view>> choices;
  std::string_view rest = decl.options;
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view group = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    std::vector<std::string_view> spellings;
    while (!group.empty()) {
      size_t comma = group.find(',');
      spellings.push_back(group.substr(0, comma));
      group = comma == std::string_view::npos ? std::string_view() : group.substr(comma + 1);
    }
    choices.push_back(std::move(spellings));
  }
  return choices;
}

// A size as 512K, 2M, 1G, 1.5M or a plain number of bytes (an optional B after the suffix).
bool parseSize(const std::string& text, double* bytes) {
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !std::isfinite(number)) return false;
  if (text.find_first_of("xXpP") != std::string::npos) return false;  // no hex sizes
  double scale = 1;
  switch (*end) {
    case '\0': break;
    case 'k':
    case 'K':
      scale = 1024.0;
      ++end;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      ++end;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      ++end;
      break;
    default: return false;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  *bytes = number * scale;
  return true;
}

// Decimal or 0x hex, with an optional sign; false when malformed or beyond int64.
bool parseInteger(const std::string& text, int64_t* out) {
  const char* digits = text.c_str();
  if (*digits == '+' || *digits == '-') ++digits;
  const bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (!std::isdigit(static_cast<unsigned char>(hex ? digits[2] : digits[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || *end != '\0') return false;
  *out = value;
  return true;
}

std::string formatNumber(const SettingDecl& decl, double value) {
  if (decl.kind == SettingKind::kBytes) {
    for (auto [scale, suffix] : {std::pair{1024.0 * 1024 * 1024, "G"}, {1024.0 * 1024, "M"}, {1024.0, "K"}}) {
      if (value >= scale && std::fmod(value, scale) == 0) return fmt::format("{}{}", value / scale, suffix);
    }
  }
  return fmt::format("{}", value);
}

Status refuse(const SettingDecl& decl, std::string_view text, std::string_view why) {
  return Status(Code::kInvalidArgument,
                fmt::format("{}={}: {}; expected {}", decl.name, text, why, acceptedValues(decl)));
}

std::string rawValue(const SettingDecl& decl) {
  const char* raw = std::getenv(decl.name);
  return raw != nullptr ? raw : "";
}

std::array<std::atomic<bool>, kCount> gWarned{};

// The value to use: the environment's when valid; else (warned once) the default.
SettingValue currentValue(Setting setting) {
  const SettingDecl& decl = settingDecl(setting);
  const std::string raw = rawValue(decl);
  if (!raw.empty()) {
    Result<SettingValue> parsed = parseSetting(decl, raw);
    if (parsed.ok()) return std::move(parsed).value();
    // Straight to the log stream: NCCLSHIM_DEBUG itself may be the bad one, being read for the level.
    if (!gWarned[static_cast<size_t>(setting)].exchange(true)) {
      logWrite(LogLevel::kWarn, fmt::format("{}; using the default {}", parsed.status().message(),
                                            *decl.defaultText ? decl.defaultText : "(unset)"));
    }
  }
  if (*decl.defaultText == '\0') return SettingValue{};
  Result<SettingValue> fallback = parseSetting(decl, decl.defaultText);
  return fallback.ok() ? std::move(fallback).value() : SettingValue{};  // every default parses (settings_test)
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<SettingDecl>& allSettings() {
  static const std::vector<SettingDecl> table(std::begin(kTable), std::end(kTable));
  return table;
}

const SettingDecl& settingDecl(Setting setting) { return kTable[static_cast<size_t>(setting)]; }

const SettingDecl* findSetting(std::string_view name) {
  for (const SettingDecl& decl : kTable) {
    if (name == decl.name) return &decl;
  }
  return nullptr;
}

std::string acceptedValues(const SettingDecl& decl) {
  const std::string range = fmt::format("from {} to {}", formatNumber(decl, decl.min), formatNumber(decl, decl.max));
  std::string accepted;
  switch (decl.kind) {
    case SettingKind::kInt: accepted = "an integer " + range; break;
    case SettingKind::kDouble: accepted = "a number " + range; break;
    case SettingKind::kBytes:
      accepted = "a size " + range + " (bytes, or with K, M, G: 512K, 2M)";
      if (hasOption(decl, "pow2")) accepted += ", a power of two";
      break;
    case SettingKind::kBool: return "0 or 1 (or true/false, yes/no, on/off)";
    case SettingKind::kString: return "any text";
    case SettingKind::kChoice: {
      std::vector<std::string_view> names;
      for (const auto& spellings : choicesOf(decl)) names.push_back(spellings.front());
      return fmt::format("one of {}", fmt::join(names, ", "));
    }
  }
  if (hasOption(decl, "auto")) accepted += ", or auto";
  return accepted;
}

Result<SettingValue> parseSetting(const SettingDecl& decl, std::string_view view) {
  const std::string text(view);
  SettingValue value;
  value.text = text;
  const bool number =
      decl.kind == SettingKind::kInt || decl.kind == SettingKind::kDouble || decl.kind == SettingKind::kBytes;
  if (number && hasOption(decl, "auto") && sameIgnoringCase(text, "auto")) {
    value.number = kSettingAuto;
    value.real = kSettingAuto;
    value.text = "auto";
    return value;
  }
  switch (decl.kind) {
    case SettingKind::kString: return value;
    case SettingKind::kChoice:
      for (const auto& spellings : choicesOf(decl)) {
        for (std::string_view spelling : spellings) {
          if (sameIgnoringCase(text, spelling)) {
            value.text = std::string(spellings.front());
            return value;
          }
        }
      }
      return refuse(decl, text, "not a choice");
    case SettingKind::kBool:
      for (const char* yes : {"1", "true", "yes", "on"}) {
        if (sameIgnoringCase(text, yes)) value.number = 1;
      }
      if (value.number == 1) return value;
      for (const char* no : {"0", "false", "no", "off"}) {
        if (sameIgnoringCase(text, no)) return value;
      }
      return refuse(decl, text, "not a boolean");
    case SettingKind::kInt: {
      int64_t parsed = 0;
      if (!parseInteger(text, &parsed)) return refuse(decl, text, "not an integer");
      value.number = parsed;
      value.real = static_cast<double>(parsed);
      break;
    }
    case SettingKind::kDouble: {
      char* end = nullptr;
      errno = 0;
      const double parsed = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0') return refuse(decl, text, "not a number");
      if (!std::isfinite(parsed)) return refuse(decl, text, "not a finite number");
      value.real = parsed;
      break;
    }
    case SettingKind::kBytes: {
      double bytes = 0;
      if (!parseSize(text, &bytes)) return refuse(decl, text, "not a size");
      if (bytes != std::floor(bytes)) return refuse(decl, text, "not a whole number of bytes");
      value.real = bytes;
      if (bytes >= decl.min && bytes <= decl.max) value.number = static_cast<int64_t>(bytes);
      break;
    }
  }
  if (!(value.real >= decl.min && value.real <= decl.max)) return refuse(decl, text, "out of range");
  if (hasOption(decl, "pow2") && (value.number & (value.number - 1)) != 0) {
    return refuse(decl, text, "not a power of two");
  }
  return value;
}

Status validateSettings(const char* const* environment) {
  if (environment == nullptr) environment = environ;
  std::vector<std::string> problems;
  for (const char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view line = *entry;
    if (line.rfind("NCCLSHIM_", 0) != 0) continue;
    const size_t equals = line.find('=');
    const std::string_view name = line.substr(0, equals);
    const std::string_view text = equals == std::string_view::npos ? "" : line.substr(equals + 1);
    const SettingDecl* decl = findSetting(name);
    if (decl == nullptr) {
      if (name.rfind("NCCLSHIM_TEST", 0) == 0 || name.rfind("NCCLSHIM_BENCH_", 0) == 0) continue;
      const std::string closest = closestSettingName(name);
      NS_WARN("{} is not a setting of ncclshim{} ('ncclshim env' lists them)", name,
              closest.empty() ? "" : fmt::format(" (did you mean {}?)", closest));
      continue;
    }
    if (text.empty()) continue;
    Result<SettingValue> parsed = parseSetting(*decl, text);
    if (!parsed.ok()) problems.push_back(parsed.status().message());
  }
  if (problems.empty()) return Status::Ok();
  return Status(Code::kInvalidArgument, fmt::format("{}", fmt::join(problems, "; ")));
}

std::string closestSettingName(std::string_view name) {
  const SettingDecl* best = nullptr;
  size_t bestDistance = 3;  // farther than 2 edits is no typo
  for (const SettingDecl& decl : kTable) {
    const size_t distance = editDistance(name, decl.name);
    if (distance < bestDistance) {
      best = &decl;
      bestDistance = distance;
    }
  }
  return best != nullptr ? best->name : "";
}

bool settingIsSet(Setting setting) { return !rawValue(settingDecl(setting)).empty(); }
int64_t settingInt(Setting setting) { return currentValue(setting).number; }
double settingDouble(Setting setting) { return currentValue(setting).real; }
bool settingBool(Setting setting) { return currentValue(setting).number != 0; }
std::string settingString(Setting setting) { return currentValue(setting).text; }
std::string settingText(Setting setting) { return rawValue(settingDecl(setting)); }

}  // namespace nshim
