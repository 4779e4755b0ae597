// The one command-line reader (common/command_line.h): the house help (usage line, description,
// option groups, footer), each kind of bad command line as one line naming the option and the value
// (unknown option, missing value, refused value, extra argument, a check across options), the last
// of a repeated option winning, and no CLI11 exception escaping the parse.
#include "common/command_line.h"

#include <string>
#include <vector>

#include "tests/catch.h"

namespace nshim {
namespace {

struct Demo {
  std::string input;
  int max = 10;
  bool quiet = false;
};

void build(CLI::App& app, Demo* d) {
  describeCommand(app, "<input> [options]", "  Does what a demo does.", "example: demo in.txt --max 3");
  app.add_option("input", d->input, "the input");
  addValueOption(
      app, "--max", "N",
      [d](const std::string& v) {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          refuseValue("--max: '" + v + "' is not a count");
        d->max = std::stoi(v);
      },
      "divergences listed\n(default 10)");
  app.add_flag("-q,--quiet", d->quiet, "print nothing")->group("output");
  app.callback([d] {
    if (d->input.empty()) refuseValue("no input given");
  });
}

Result<Parsed> parse(std::vector<std::string> args, Demo* d) {
  CLI::App app("", "demo");
  build(app, d);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parseCommandLine(app, static_cast<int>(argv.size()), argv.data());
}

std::string error(std::vector<std::string> args) {
  Demo d;
  Result<Parsed> parsed = parse(std::move(args), &d);
  return parsed.ok() ? "" : parsed.status().message();
}

TEST_CASE("command line: values in both spellings, the last of a repeated option wins", "[common][cli]") {
  Demo d;
  Result<Parsed> parsed = parse({"in.txt", "--max", "3", "-q", "--max=7"}, &d);
  REQUIRE(parsed.ok());
  CHECK(*parsed == Parsed::kRun);
  CHECK(d.input == "in.txt");
  CHECK(d.max == 7);
  CHECK(d.quiet);
}

TEST_CASE("command line: a bad one is one line naming the option and the value", "[common][cli]") {
  CHECK(error({"in.txt", "--bogus", "1"}) == "unknown option --bogus");
  CHECK(error({"in.txt", "--bogus=1"}) == "unknown option --bogus");
  CHECK(error({"in.txt", "--max"}) == "--max needs a value");
  CHECK(error({"in.txt", "--max", "x"}) == "--max: 'x' is not a count");
  CHECK(error({"in.txt", "other.txt"}) == "unexpected argument 'other.txt'");
  CHECK(error({}) == "no input given");
  CHECK(error({"--bogus", "in.txt", "--max", "x"}) == "unknown option --bogus");  // before the value refused
}

TEST_CASE("command line: --help wins over a missing input and is generated the house way", "[common][cli]") {
  Demo d;
  Result<Parsed> parsed = parse({"--help"}, &d);
  REQUIRE(parsed.ok());
  CHECK(*parsed == Parsed::kHelp);
  CLI::App app("", "demo");
  build(app, &d);
  const std::string help = commandHelp(app);
  CHECK(help.rfind("usage: demo <input> [options]\n  Does what a demo does.\n", 0) == 0);
  CHECK(help.find("options:\n  --max N                   divergences listed\n"
                  "                            (default 10)\n") != std::string::npos);
  CHECK(help.find("output:\n  -q,--quiet                print nothing\n") != std::string::npos);
  CHECK(help.find("-h,--help                 this text") != std::string::npos);
  CHECK(help.find("example: demo in.txt --max 3") != std::string::npos);
}

TEST_CASE("command line: runCommand's body's error and status", "[common][cli]") {
  Demo d;
  CLI::App app("", "demo");
  build(app, &d);
  std::vector<std::string> args{"in.txt"};
  std::vector<char*> argv{args[0].data()};
  CHECK(runCommand(app, 1, argv.data(), [] { return Result<int>(1); }) == 1);
  CHECK(runCommand(app, 1, argv.data(), exitZeroWhenOk([] { return Status(Code::kInvalidArgument, "no"); })) == 2);
  CHECK(runCommand(app, 1, argv.data(), exitZeroWhenOk([] { return Status::Ok(); })) == 0);
}

}  // namespace
}  // namespace nshim
