// Launching the ranks of `ncclshim perf` (local fork or mpirun; under mpirun the unique id goes
// through tools/perf/id_file.h) and collecting their exit codes.
#include "tools/perf/perf_launch.h"

#include <nccl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/main_fence.h"
#include "tools/perf/id_file.h"
#include "tools/perf/perf_options.h"
#include "tools/perf/perf_runner.h"

namespace nshim::perf {
namespace {

int envRank(const char* const* names) {
  for (const char* const* name = names; *name; ++name) {
    if (const char* value = std::getenv(*name)) return std::atoi(value);
  }
  return -1;
}

std::string toHex(const ncclUniqueId& id) {
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : id.internal) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

bool fromHex(const std::string& hex, ncclUniqueId* id) {
  if (hex.size() != 2 * sizeof(id->internal)) return false;
  for (size_t i = 0; i < sizeof(id->internal); ++i) {
    id->internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return true;
}

int runLocalRanks(const PerfOptions& options) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    std::fprintf(stderr, "ncclshim perf: ncclGetUniqueId failed: %s\n", ncclGetLastError(nullptr));
    return 1;
  }
  std::vector<int> cpus = cpusForRanks(options.nranks, options.binding);
  if (!cpus.empty()) {
    std::string list;
    for (int cpu : cpus) list += (list.empty() ? "" : ",") + std::to_string(cpu);
    std::printf("# ranks bound to CPUs %s (--bind none turns this off)\n", list.c_str());
  }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int rank = 0; rank < options.nranks; ++rank) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("ncclshim perf: fork");
      for (pid_t child : children) kill(child, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      if (!cpus.empty()) {
        if (std::string error = bindToCpu(cpus[rank]); !error.empty()) {
          std::fprintf(stderr, "ncclshim perf: rank %d: %s\n", rank, error.c_str());
          _exit(1);
        }
      }
      int code = runPerfRank(options, id, rank, options.nranks);
      std::fflush(nullptr);
      _exit(code);
    }
    children.push_back(pid);
  }
  int exitCode = 0;
  for (int rank = 0; rank < options.nranks; ++rank) {
    int status = 0;
    waitpid(children[rank], &status, 0);
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "ncclshim perf: rank %d was killed by signal %d\n", rank, WTERMSIG(status));
      exitCode = 1;
    } else if (WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "ncclshim perf: rank %d exited with code %d\n", rank, WEXITSTATUS(status));
      exitCode = 1;
    }
  }
  return exitCode;
}

int runLauncherRank(const PerfOptions& options, int rank, int nranks) {
  std::string path = options.idFile;
  if (path.empty()) {
    Result<std::string> found = defaultIdFilePath();
    if (!found.ok()) {
      std::fprintf(stderr, "ncclshim perf: rank %d: %s\n", rank, found.status().message().c_str());
      return 1;
    }
    path = *found;
  }
  ncclUniqueId id;
  std::optional<IdFileRemover> remover;
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess) {
      std::fprintf(stderr, "ncclshim perf: ncclGetUniqueId failed: %s\n", ncclGetLastError(nullptr));
      return 1;
    }
    if (Status written = writeIdFile(path, toHex(id) + "\n"); !written.ok()) {
      std::fprintf(stderr, "ncclshim perf: %s\n", written.message().c_str());
      return 1;
    }
    remover.emplace(path);
  } else {
    bool found = false;
    std::string foreign;                                          // why the file there was not taken, said once
    for (int attempt = 0; attempt < 3000 && !found; ++attempt) {  // up to 60 s
      std::string text, why;
      IdFileState state = readIdFile(path, &text, &why);
      if (state == IdFileState::kForeign && foreign.empty()) {
        foreign = why;
        std::fprintf(stderr, "ncclshim perf: rank %d: ignoring %s: %s; waiting for rank 0's own\n", rank, path.c_str(),
                     why.c_str());
      }
      std::istringstream in(text);
      std::string hex;
      found = state == IdFileState::kRead && (in >> hex) && fromHex(hex, &id);
      if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!found) {
      std::string ignored = foreign.empty() ? "" : " (the file there was ignored: " + foreign + ")";
      std::fprintf(stderr,
                   "ncclshim perf: rank %d: no unique id of yours appeared in %s within 60 s%s; use --id-file on a "
                   "shared path\n",
                   rank, path.c_str(), ignored.c_str());
      return 1;
    }
  }
  return runPerfRank(options, id, rank, nranks);
}

const char* kPerfDescription = R"(  An nccl-tests-compatible benchmark written against the NCCL API. GPU-free it runs on
  libncclshim.so over host memory; -np N forks N local ranks, or run one rank per process
  under mpirun (the unique id is passed through a private file of yours, or --id-file).
ops: all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter)";

const char* kPerfNotes = R"(sizes follow nccl-tests: 'size' is the whole buffer (all ranks' blocks for all_gather,
reduce_scatter, alltoall, gather, scatter); busbw = algbw x 2(n-1)/n for all_reduce, (n-1)/n for
all_gather, reduce_scatter, alltoall, gather and scatter, 1 otherwise (broadcast, reduce, sendrecv).
example: ncclshim perf all_reduce -np 4 -b 8 -e 128M -f 2)";

// After the options are read: one rank per process under mpirun, else -np local ranks.
int runPerf(PerfOptions options) {
  static const char* const kRankVars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", nullptr};
  static const char* const kSizeVars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", nullptr};
  int worldRank = envRank(kRankVars);
  int worldSize = envRank(kSizeVars);
  if (options.nranks == 0 && worldSize > 1 && worldRank >= 0) return runLauncherRank(options, worldRank, worldSize);
  if (options.nranks == 0) options.nranks = 1;
  return runLocalRanks(options);
}

}  // namespace

int perfMain(int argc, char** argv) {
  PerfOptions options;
  CLI::App app("", "ncclshim perf");
  describeCommand(app, "<op> [options]", kPerfDescription, kPerfNotes);
  addPerfOptions(app, &options);
  std::vector<std::string> args = rewriteNcclTestsFlags(argc, argv);
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  return runCommand(app, argc, pointers.data(), [&options]() -> Result<int> {
    setFenceActivity("running " + options.op);  // the op, not an input read (common/main_fence.h)
    return runPerf(options);
  });
}

}  // namespace nshim::perf
