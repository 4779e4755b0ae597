// Implementation of the multi-rank test helpers.
#include "tests/test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "common/clock.h"

// Defined by ASan's runtime only; null elsewhere.
extern "C" void __asan_init() __attribute__((weak));

namespace nshim::testing {

bool runningUnderAddressSanitizer() { return &__asan_init != nullptr; }

std::vector<std::string> runRanksInThreads(int nranks, const std::function<std::string(int)>& fn) {
  std::vector<std::string> results(nranks);
  std::vector<std::thread> threads;
  threads.reserve(nranks);
  for (int rank = 0; rank < nranks; ++rank) {
    threads.emplace_back([&, rank] { results[rank] = fn(rank); });
  }
  for (auto& thread : threads) thread.join();
  return results;
}

std::vector<int> runRanksInProcesses(int nranks, const std::function<std::string(int)>& fn, double timeoutSeconds) {
  std::fflush(nullptr);
  // Every child waits for the end of this pipe (the parent closes it once all are forked) before it
  // starts: no rank talks to a bootstrap root thread of this process while it is still forking, so
  // that thread is idle at every fork() and cannot hold an allocator lock that a child inherits
  // (GCC 12's libasan does not guard its allocator across fork: such a child would hang).
  int start[2];
  if (pipe(start) != 0) return std::vector<int>(nranks, -1);
  std::vector<pid_t> pids(nranks, -1);
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      close(start[1]);
      char byte;
      while (read(start[0], &byte, 1) < 0 && errno == EINTR) {}
      close(start[0]);
      std::string error = fn(rank);
      if (!error.empty()) std::fprintf(stderr, "rank %d: %s\n", rank, error.c_str());
      std::fflush(nullptr);
      _exit(error.empty() ? 0 : 1);
    }
    pids[rank] = pid;
  }
  close(start[0]);
  close(start[1]);  // go
  std::vector<int> codes(nranks, -1);
  int remaining = nranks;
  Deadline deadline = Deadline::after(timeoutSeconds);
  while (remaining > 0 && !deadline.expired()) {
    for (int rank = 0; rank < nranks; ++rank) {
      if (pids[rank] <= 0) continue;
      int status = 0;
      if (waitpid(pids[rank], &status, WNOHANG) == pids[rank]) {
        codes[rank] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pids[rank] = -1;
        --remaining;
      }
    }
    usleep(2000);
  }
  for (int rank = 0; rank < nranks; ++rank) {
    if (pids[rank] > 0) {
      kill(pids[rank], SIGKILL);
      waitpid(pids[rank], nullptr, 0);
      std::fprintf(stderr, "rank %d: still running after %.0f s, killed\n", rank, timeoutSeconds);
    }
  }
  return codes;
}

double patternValue(int rank, size_t index, int salt) {
  // Values in [-3, 4]: sums over 8 ranks stay within fp8 e4m3's exact integers; products of up to
  // 8 such values overflow nothing in int8 only when the test keeps ranks small, which tests handle.
  return static_cast<double>(static_cast<int>((rank * 7 + index * 13 + salt * 5) % 8) - 3);
}

}  // namespace nshim::testing
