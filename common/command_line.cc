// The house set-up of CLI11 and the one place its exceptions become a line and an exit status
// (command_line.h).
#include "common/command_line.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <vector>

#include "common/main_fence.h"

namespace nshim {
namespace {

constexpr size_t kOptionColumn = 28;

// "usage: NAME SYNOPSIS", the description, the option groups, the footer; positionals are named in
// the synopsis and explained in the description, so they get no section of their own.
class HouseFormatter : public CLI::Formatter {
 public:
  explicit HouseFormatter(std::string synopsis) : synopsis_(std::move(synopsis)) { column_width(kOptionColumn); }
  std::string make_description(const CLI::App*) const override { return ""; }
  std::string make_usage(const CLI::App* app, std::string) const override {
    std::string name = app->get_name();  // a subcommand's with its parents' ("ncclshim-trace dump")
    for (const CLI::App* parent = app->get_parent(); parent != nullptr; parent = parent->get_parent()) {
      name = parent->get_name() + " " + name;
    }
    std::string text = "usage: " + name + (synopsis_.empty() ? "" : " " + synopsis_) + "\n";
    if (!app->get_description().empty()) text += app->get_description() + "\n\n";
    return text;
  }
  std::string make_positionals(const CLI::App*) const override { return ""; }
  std::string make_group(std::string group, bool positional, std::vector<const CLI::Option*> options) const override {
    std::string text = group + ":\n";
    for (const CLI::Option* option : options) text += make_option(option, positional);
    return text;
  }

 private:
  std::string synopsis_;
};

// The one line for a bad command line, in the words the commands have always used. An unknown option
// comes first: the value after it may have been taken for a positional and refused.
std::string errorText(const CLI::ParseError& error, const CLI::App& app) {
  std::string text = error.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr && text.find(" required ") != std::string::npos) {
    return text.substr(0, text.find(':')) + " needs a value";  // "--html: 1 required TEXT missing"
  }
  std::vector<std::string> left = app.remaining(true);  // a subcommand's too
  auto option =
      std::find_if(left.begin(), left.end(), [](const std::string& a) { return a.size() > 1 && a[0] == '-'; });
  if (option != left.end()) return "unknown option " + option->substr(0, option->find('='));
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr && !left.empty()) {
    return "unexpected argument '" + left.front() + "'";
  }
  return text;
}

void nameInputsForFence(const CLI::App& app) {
  std::string activity;
  for (const CLI::Option* option : app.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    for (const std::string& input : option->results()) activity += (activity.empty() ? "reading " : " and ") + input;
  }
  setFenceActivity(activity);
}

// -h/--help, after the command's own options in their last group (and its subcommands').
void addHelpFlag(CLI::App& app) {
  if (app.get_help_ptr() == nullptr) {
    std::vector<CLI::Option*> options = app.get_options([](CLI::Option* o) { return o->nonpositional(); });
    CLI::Option* help = app.set_help_flag("-h,--help", "this text");
    const bool plain =
        std::any_of(options.begin(), options.end(), [](CLI::Option* o) { return o->get_group() == "options"; });
    if (!options.empty() && !plain) help->group(options.back()->get_group());
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) addHelpFlag(*sub);
}

}  // namespace

void describeCommand(CLI::App& app, const std::string& synopsis, const std::string& description,
                     const std::string& footer) {
  app.formatter(std::make_shared<HouseFormatter>(synopsis));
  app.description(description);
  app.footer(footer);
  app.option_defaults()->group("options")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_help_flag();  // added again by parseCommandLine, after the command's own options
}

[[noreturn]] void refuseValue(const std::string& message) { throw CLI::ValidationError(message); }

CLI::Option* addValueOption(CLI::App& app, const std::string& names, const std::string& valueName,
                            std::function<void(const std::string&)> take, const std::string& description) {
  return app.add_option_function<std::string>(names, std::move(take), description)->option_text(valueName);
}

void printHelpText(const std::string& text, std::FILE* out) {
  std::fflush(out);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fileno(out), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string commandHelp(CLI::App& app) {
  addHelpFlag(app);
  return app.help();
}

Result<Parsed> parseCommandLine(CLI::App& app, int argc, char** argv) {
  addHelpFlag(app);
  std::vector<std::string> args(argv, argv + argc);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) { return Parsed::kHelp; } catch (const CLI::ParseError& error) {
    return Status(Code::kInvalidArgument, errorText(error, app));
  }
  return Parsed::kRun;
}

int runCommand(CLI::App& app, int argc, char** argv, const std::function<Result<int>()>& run) {
  Result<Parsed> parsed = parseCommandLine(app, argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), parsed.status().message().c_str());
    return 2;
  }
  if (*parsed == Parsed::kHelp) {
    printHelpText(commandHelp(app), stdout);
    return 0;
  }
  nameInputsForFence(app);
  Result<int> status = run();
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), status.status().message().c_str());
    return 2;
  }
  return *status;
}

std::function<Result<int>()> exitZeroWhenOk(std::function<Status()> work) {
  return [work = std::move(work)]() -> Result<int> {
    NS_RETURN_IF_ERROR(work());
    return 0;
  };
}

}  // namespace nshim
