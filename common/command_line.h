// The one way a command line is read (issue 38): CLI11 (Debian libcli11-dev, header-only) set up the
// house way for phynet, every `ncclshim` command and ncclshim-trace. The help is generated:
// "usage: PROGRAM SYNOPSIS", the description, the options in named groups with one description each,
// then the notes and examples (the footer). A bad command line is ONE line that names the option and
// the value; a repeated option takes its last value. CLI11 reports by throwing CLI::ParseError:
// parseCommandLine (and runCommand, built on it) catch it, so no exception reaches a main.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <string>

#include "common/status.h"

namespace nshim {

// Sets `app` up the house way (its name is the program's, e.g. "ncclshim summary"). Options go to
// the group "options" unless put in another (option->group("replay")); -h/--help is added last.
void describeCommand(CLI::App& app, const std::string& synopsis, const std::string& description,
                     const std::string& footer = "");

// For an option's callback: refuses its value with the whole message ("--algo: 'nvls' (auto, ...)").
[[noreturn]] void refuseValue(const std::string& message);

// An option with one value that `take` stores or refuses (refuseValue); `valueName` stands for the
// value in the help ("N", "FILE.csv", "tcp|ibverbs").
CLI::Option* addValueOption(CLI::App& app, const std::string& names, const std::string& valueName,
                            std::function<void(const std::string&)> take, const std::string& description);

// The generated help of `app` (with -h/--help in it).
std::string commandHelp(CLI::App& app);

// Writes a help text to `out` in one write: a reader that stops at the line it wants (`| grep -q`)
// then never cuts the writer off mid-text (SIGPIPE).
void printHelpText(const std::string& text, std::FILE* out);

enum class Parsed { kRun, kHelp };

// Parses argv[0..argc) (the program's name left out): kHelp when -h/--help was given, else kRun; a
// bad command line is an error whose message is the line to print (without the program's name).
Result<Parsed> parseCommandLine(CLI::App& app, int argc, char** argv);

// The main of a command: parses (--help: the help on stdout, 0; a bad command line: "<program>:
// <message> (see --help)" on stderr, 2), names the positional inputs as the fence's activity
// ("reading a and b", common/main_fence.h), then returns run()'s exit status, or says its error
// ("<program>: <message>") and returns 2.
int runCommand(CLI::App& app, int argc, char** argv, const std::function<Result<int>()>& run);

// runCommand's body for a command whose work returns a Status: exit status 0 when it is ok.
std::function<Result<int>()> exitZeroWhenOk(std::function<Status()> work);

}  // namespace nshim
