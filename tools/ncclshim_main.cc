// The `ncclshim` command: one entry point with subcommands (perf, ...), each with --help.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/perf/perf_launch.h"

namespace {

const char* kUsage = R"(usage: ncclshim <command> [options]
commands:
  perf      nccl-tests-compatible benchmark of the NCCL API (GPU-free on libncclshim.so)
run 'ncclshim <command> --help' for the options of a command.
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  if (command == "perf") return nshim::perf::perfMain(argc - 2, argv + 2);
  std::fprintf(stderr, "ncclshim: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
