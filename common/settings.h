// NCCLSHIM_* settings: each declared once (settings_list.h: name, kind, default, range, help) and
// read through that declaration. A bad value is an error naming the variable, the value and what
// it accepts, never a clamp: every entry point calls validateSettings() first and refuses to run
// on one (the shim's first NCCL call fails with ncclInvalidArgument, the profiler plugin's init
// fails, phynet and ncclshim exit with status 2). The accessors can then trust the environment; one
// that meets a bad value anyway (a program without such an entry point) warns once and returns the
// default. An empty value is unset, as NCCL reads its own variables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nshim {

enum class Setting {
#define NS_SETTING(name, ...) name,
#include "common/settings_list.h"
#undef NS_SETTING
};

enum class SettingKind { kInt, kDouble, kBytes, kBool, kString, kChoice };

struct SettingDecl {
  Setting id;
  const char* name;
  SettingKind kind;
  const char* defaultText;  // as a user writes it; "" = unset
  double min;               // numbers: the accepted range, inclusive
  double max;
  const char* options;  // settings_list.h: choices, or "auto" / "pow2" for numbers
  const char* help;
};

// Read as -1 from a number setting that accepts the word auto (its options say "auto").
inline constexpr int64_t kSettingAuto = -1;

// The whole table, in declaration order.
const std::vector<SettingDecl>& allSettings();
const SettingDecl& settingDecl(Setting setting);
// The declaration named `name`, or null.
const SettingDecl* findSetting(std::string_view name);

// A parsed value: `number` for int, bytes and bool (0/1), `real` for double (and every number),
// `text` for strings and choices (a choice's own name, whichever alias was written).
struct SettingValue {
  int64_t number = 0;
  double real = 0;
  std::string text;
};
// `text` as a value of `decl`; the error names the variable, the value and what it accepts.
Result<SettingValue> parseSetting(const SettingDecl& decl, std::string_view text);
// What `decl` accepts, for messages and `ncclshim env`: "an integer from 1 to 64", ...
std::string acceptedValues(const SettingDecl& decl);

// Checks every NCCLSHIM_* variable of `environment` (null: this process's) against the table: an
// error listing every bad one (kInvalidArgument), and a warning for each name not in the table
// (with the closest known name, for a typo) unless it starts with NCCLSHIM_TEST or NCCLSHIM_BENCH_
// (the test and bench scripts' own).
Status validateSettings(const char* const* environment = nullptr);
// The known name closest to `name` (a typo's likely meaning), or "" when none is near.
std::string closestSettingName(std::string_view name);

// Accessors: the environment's value when set and valid, else the default.
bool settingIsSet(Setting setting);
int64_t settingInt(Setting setting);  // kInt, kBytes (kSettingAuto for auto)
double settingDouble(Setting setting);
bool settingBool(Setting setting);
std::string settingString(Setting setting);  // kString, kChoice
// The raw value when set (non-empty), else "".
std::string settingText(Setting setting);

}  // namespace nshim
