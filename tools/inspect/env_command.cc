// `ncclshim env`: every NCCLSHIM_* setting of the table (common/settings_list.h) with its value here
// and where it came from; `--markdown` prints docs/settings.md's table from the same table.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "common/command_line.h"
#include "common/settings.h"
#include "tools/inspect/commands.h"

extern char** environ;

namespace nshim::tools {
namespace {

const char* kEnvDescription =
    R"(Prints every NCCLSHIM_* setting, its value in this environment and where it came from (default or
environment); a value the setting does not accept is marked INVALID with what it accepts, and the
exit status is then 1. NCCLSHIM_* variables that are no setting are listed with the closest name.)";

std::string markdownDefault(const SettingDecl& decl) {
  return *decl.defaultText ? fmt::format("`{}`", decl.defaultText) : "unset";
}

std::string markdownValues(const SettingDecl& decl) {
  return decl.kind == SettingKind::kString ? "text" : acceptedValues(decl);
}

void printMarkdown() {
  std::printf("| variable | default | values | meaning |\n|---|---|---|---|\n");
  for (const SettingDecl& decl : allSettings()) {
    std::printf("| `%s` | %s | %s | %s |\n", decl.name, markdownDefault(decl).c_str(), markdownValues(decl).c_str(),
                decl.help);
  }
}

// One line per setting; returns whether every value set is valid.
bool printValues() {
  bool valid = true;
  for (const SettingDecl& decl : allSettings()) {
    const std::string raw = settingText(decl.id);
    std::string value = raw, source = "environment";
    if (raw.empty()) {
      value = *decl.defaultText ? decl.defaultText : "(unset)";
      source = "default";
    } else if (Result<SettingValue> parsed = parseSetting(decl, raw); !parsed.ok()) {
      source = "environment: INVALID: " + parsed.status().message();
      valid = false;
    }
    std::printf("%-32s %-16s %s\n", decl.name, value.c_str(), source.c_str());
  }
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string line = *entry;
    const std::string name = line.substr(0, line.find('='));
    if (name.rfind("NCCLSHIM_", 0) != 0 || findSetting(name) != nullptr) continue;
    const std::string closest = closestSettingName(name);
    std::printf("%-32s %-16s not a setting%s\n", name.c_str(), line.substr(name.size() + 1).c_str(),
                closest.empty() ? "" : fmt::format(" (did you mean {}?)", closest).c_str());
  }
  return valid;
}

}  // namespace

int envMain(int argc, char** argv) {
  bool markdown = false;
  CLI::App app("", "ncclshim env");
  describeCommand(app, "[--markdown]", kEnvDescription);
  app.add_flag("--markdown", markdown, "docs/settings.md's table (variable, default, values, meaning) instead");
  return runCommand(app, argc, argv, [&markdown]() -> Result<int> {
    if (!markdown) return printValues() ? 0 : 1;
    printMarkdown();
    return 0;
  });
}

}  // namespace nshim::tools
