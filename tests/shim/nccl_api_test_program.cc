// The shim's process test, written only against nccl.h and POSIX. `nccl_api_test_program N`
// launches every scenario with N ranks as separate processes (fork + exec of itself, inheriting
// LD_PRELOAD=libncclshim.so; rank 0 passes the unique id to the others through a file), gathers the
// ranks' "CHECK PASS|FAIL" lines, prints one line per check and "N passed, M failed".
// `nccl_api_test_program --worker <scenario> <rank> <nranks> <dir>` runs one rank of one scenario.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../../common/main_fence.h"  // built without -I.
#include "shim_checks.h"

namespace shimtest {
namespace {

void scenarioApi(const Context& ctx) {
  ncclComm_t comm = nullptr;
  if (!runCheck(ctx, "init", [&] { return initComm(ctx, "main", &comm); })) return;
  runBasicChecks(ctx, comm);
  runArgumentChecks(ctx, comm);
  runCollectiveChecks(ctx, comm);
  runPointToPointChecks(ctx, comm);
  runSplitChecks(ctx, comm);
  runConfigChecks(ctx);
  runCheck(ctx, "finalize-and-destroy", [&]() -> std::string {
    NT_TRY(ncclCommFinalize(comm));
    NT_TRY(ncclCommDestroy(comm));
    return "";
  });
}

// Rank r on host r % 2 (NCCLSHIM_HOSTID, as NCCL_HOSTID; placed round robin, as some launchers
// do): the GPU-free communicator finds the two hosts, every collective and transfer is exact, and
// the ranks of one host meet over shared memory: this rank maps a ring with each node-mate and none
// with a rank of the other host.
void scenarioNodes(const Context& ctx) {
  setenv("NCCLSHIM_HOSTID", ("shimtest-host" + std::to_string(ctx.rank % 2)).c_str(), 1);
  ncclComm_t comm = nullptr;
  if (!runCheck(ctx, "init", [&] { return initComm(ctx, "main", &comm); })) return;
  runCollectiveChecks(ctx, comm);
  runPointToPointChecks(ctx, comm);
  runCheck(ctx, "node-mates-over-shared-memory", [&]() -> std::string {
    std::ifstream maps("/proc/self/maps");
    std::map<int, int> ringsWith;  // peer -> rings mapped with it
    for (std::string line; std::getline(maps, line);) {
      const size_t at = line.find("/ncclshim-");
      if (at == std::string::npos) continue;
      int from = -1, to = -1;
      const size_t dash = line.find('-', at + 10);
      if (dash == std::string::npos || std::sscanf(line.c_str() + dash, "-%d-%d", &from, &to) != 2) continue;
      if (from != ctx.rank && to != ctx.rank) return "a ring between other ranks is mapped: " + line;
      ringsWith[from == ctx.rank ? to : from] += 1;
    }
    for (int peer = 0; peer < ctx.nranks; ++peer) {
      const bool mate = peer != ctx.rank && peer % 2 == ctx.rank % 2;
      if (mate && ringsWith[peer] == 0) return "no shared-memory ring with node-mate " + std::to_string(peer);
      if (!mate && ringsWith[peer] != 0)
        return "a shared-memory ring with rank " + std::to_string(peer) + " of another host";
    }
    return "";
  });
  runCheck(ctx, "finalize-and-destroy", [&]() -> std::string {
    NT_TRY(ncclCommFinalize(comm));
    NT_TRY(ncclCommDestroy(comm));
    return "";
  });
}

struct Scenario {
  const char* name;
  void (*run)(const Context&);
  bool multiProcess;         // one process per rank, else one process holding every rank
  const char* timeout;       // NCCLSHIM_TIMEOUT for its ranks (seconds)
  double limitSeconds;       // the launcher kills ranks still running after this
  bool lastRankKilled;       // the last rank is expected to die by SIGKILL
  bool checksCalls = false;  // NCCLSHIM_CHECK_CALLS=1 whatever the environment says (else 1 unless set)
};

const Scenario kScenarios[] = {
    {"api", scenarioApi, true, "20", 300, false},
    {"nodes", scenarioNodes, true, "20", 300, false},
    {"mismatch", scenarioMismatch, true, "3", 90, false},
    {"killed", scenarioKilled, true, "3", 60, true},
    {"abort", scenarioAbort, true, "30", 60, false},
    {"initall", scenarioInitAll, false, "20", 120, false},
    {"groupinit", scenarioGroupInit, false, "20", 60, false},
    {"callcheck", scenarioCallCheck, true, "10", 60, false, true},
    {"handles", scenarioHandles, false, "20", 60, false},
    {"badsetting", scenarioBadSetting, false, "inf", 30, false},
};

struct Outcome {
  bool failed = false;
  std::string why;
};

std::string selfPath() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  path[length > 0 ? length : 0] = '\0';
  return path;
}

pid_t spawn(const Scenario& scenario, int rank, int nranks, const std::string& dir) {
  std::string log = dir + "/rank" + std::to_string(rank) + ".log";
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 1);
  dup2(fd, 2);
  setenv("NCCLSHIM_TIMEOUT", scenario.timeout, 1);
  // The ranks check that they call the same collectives (libshim/call_check.h): on in the tests.
  setenv("NCCLSHIM_CHECK_CALLS", "1", scenario.checksCalls ? 1 : 0);
  std::string self = selfPath(), r = std::to_string(rank), n = std::to_string(nranks);
  execl(self.c_str(), self.c_str(), "--worker", scenario.name, r.c_str(), n.c_str(), dir.c_str(), nullptr);
  std::perror("execl");
  _exit(127);
}

// Waits for every process until the limit; returns each one's wait status (-1: killed on timeout).
std::vector<int> waitAll(std::vector<pid_t> pids, double limitSeconds) {
  std::vector<int> statuses(pids.size(), -1);
  double end = secondsNow() + limitSeconds;
  size_t remaining = pids.size();
  while (remaining > 0 && secondsNow() < end) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        statuses[i] = status;
        pids[i] = -1;
        --remaining;
      }
    }
    usleep(10000);
  }
  for (pid_t pid : pids) {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  return statuses;
}

std::string tail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "    " + all[i] + "\n";
  return out;
}

// Runs one scenario; adds its checks (in first-seen order) to `results`.
void launch(const Scenario& scenario, int nranks, std::vector<std::pair<std::string, Outcome>>& results) {
  char pattern[] = "/tmp/ncclshim-test-XXXXXX";
  std::string dir = mkdtemp(pattern);
  int processes = scenario.multiProcess ? nranks : 1;
  std::vector<pid_t> pids;
  for (int rank = 0; rank < processes; ++rank) pids.push_back(spawn(scenario, rank, nranks, dir));
  std::vector<int> statuses = waitAll(pids, scenario.limitSeconds);

  std::map<std::string, size_t> index;
  auto record = [&](const std::string& name, bool failed, const std::string& why) {
    auto it = index.find(name);
    if (it == index.end()) {
      it = index.emplace(name, results.size()).first;
      results.push_back({name, Outcome()});
    }
    Outcome& outcome = results[it->second].second;
    if (failed && !outcome.failed) outcome = {true, why};
  };
  bool anyFailed = false;
  for (int rank = 0; rank < processes; ++rank) {
    std::ifstream in(dir + "/rank" + std::to_string(rank) + ".log");
    for (std::string line; std::getline(in, line);) {
      bool pass = line.rfind("CHECK PASS ", 0) == 0, fail = line.rfind("CHECK FAIL ", 0) == 0;
      if (!pass && !fail) continue;
      std::string rest = line.substr(11);
      size_t colon = rest.find(": ");
      std::string name = fail && colon != std::string::npos ? rest.substr(0, colon) : rest;
      record(name, fail, "rank " + std::to_string(rank) + ": " + (fail ? rest.substr(colon + 2) : ""));
      anyFailed |= fail;
    }
    int status = statuses[rank];
    bool victim = scenario.lastRankKilled && rank == processes - 1;
    bool ok = victim ? (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                     : (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::string how = status == -1          ? "still running at the scenario limit (killed)"
                      : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                            : "exit code " + std::to_string(WEXITSTATUS(status));
    record(std::string(scenario.name) + "/rank" + std::to_string(rank) + "-process", !ok, how);
    anyFailed |= !ok;
  }
  if (!anyFailed) {
    if (!std::getenv("NCCLSHIM_TEST_KEEP")) std::system(("rm -rf '" + dir + "'").c_str());
    return;
  }
  {
    for (int rank = 0; rank < processes; ++rank) {
      std::printf("  --- %s rank %d log (%s/rank%d.log), last lines:\n%s", scenario.name, rank, dir.c_str(), rank,
                  tail(dir + "/rank" + std::to_string(rank) + ".log", 12).c_str());
    }
  }
}

int launcherMain(int nranks, const std::vector<std::string>& only) {
  std::vector<std::pair<std::string, Outcome>> results;
  for (const Scenario& scenario : kScenarios) {
    bool wanted = only.empty();
    for (const std::string& name : only) wanted |= name == scenario.name;
    if (wanted) launch(scenario, nranks, results);
  }
  int passed = 0, failed = 0;
  for (const auto& [name, outcome] : results) {
    if (outcome.failed) {
      std::printf("FAIL [n=%d] %s: %s\n", nranks, name.c_str(), outcome.why.c_str());
      ++failed;
    } else {
      std::printf("PASS [n=%d] %s\n", nranks, name.c_str());
      ++passed;
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

int workerMain(const std::string& name, int rank, int nranks, const std::string& dir) {
  for (const Scenario& scenario : kScenarios) {
    if (name == scenario.name) {
      scenario.run(Context{name, rank, nranks, dir});
      std::fflush(stdout);
      return 0;
    }
  }
  std::fprintf(stderr, "unknown scenario %s\n", name.c_str());
  return 2;
}

int run(int argc, char** argv) {
  if (argc == 6 && std::strcmp(argv[1], "--worker") == 0) {
    nshim::setFenceActivity(std::string("running scenario ") + argv[2] + " as rank " + argv[3]);
    return workerMain(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5]);
  }
  int nranks = argc >= 2 ? std::atoi(argv[1]) : 0;
  if (nranks < 1) {
    std::fprintf(stderr, "usage: %s <nranks> [scenario...]   (run with LD_PRELOAD=libncclshim.so)\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  return launcherMain(nranks, std::vector<std::string>(argv + 2, argv + argc));
}

}  // namespace
}  // namespace shimtest

int main(int argc, char** argv) {
  return nshim::runFenced("nccl_api_test_program", [&] { return shimtest::run(argc, argv); });
}
