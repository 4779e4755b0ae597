// The trace tools' subcommands of `ncclshim` (tools/ncclshim_main.cc dispatches to them). Each
// takes the arguments after its name, reads them with runCommand (common/command_line.h: generated
// --help, one line for a bad command line), and returns the process exit status:
// 0 success, 2 usage or input error; `diff` returns 1 when the inputs differ, `compare` 1 when a
// ratio is below --fail-below; `plot`, `report` and `compare -o` 3 when plotting is not available
// on this machine (no Python 3 with matplotlib).
#pragma once

namespace nshim::tools {

int summaryMain(int argc, char** argv);
int diffMain(int argc, char** argv);
int convertMain(int argc, char** argv);
int scaleMain(int argc, char** argv);  // scale_command.cc
int plotMain(int argc, char** argv);
int reportMain(int argc, char** argv);   // page_commands.cc
int compareMain(int argc, char** argv);  // page_commands.cc
int envMain(int argc, char** argv);      // env_command.cc

}  // namespace nshim::tools
