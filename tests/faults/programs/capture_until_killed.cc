// A GPU-free NCCL program for the capture fault tests (tests/suites/fault_tests.sh): one rank on its
// own unique id, host buffers, ncclAllReduce and ncclBroadcast in turn. It knows only nccl.h and is
// linked against the aborting stub libnccl.so.2, so it runs on libncclshim.so under LD_PRELOAD,
// recording to NCCLSHIM_TRACE_DIR like any captured job.
// After every call that returned it writes "completed N" with write(2) (no buffering), so whoever
// kills it knows how many calls completed before the signal.
// Usage: capture_until_killed <calls>        stop after that many calls by raising SIGTERM itself
//                                            (0: run until killed from outside)
//        capture_until_killed <calls> exit   destroy the communicator and return 0 after them
//                                            (tests/suites/shared_host_tests.sh)
#include <nccl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "../../../common/main_fence.h"  // built by fault_tests.sh without -I.

namespace {

void say(const char* text, long value) {
  char line[64];
  int n = std::snprintf(line, sizeof(line), "%s %ld\n", text, value);
  if (write(STDOUT_FILENO, line, static_cast<size_t>(n)) != n) _exit(3);
}

bool ok(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return true;
  std::fprintf(stderr, "capture_until_killed: %s failed: %s\n", what, ncclGetErrorString(result));
  return false;
}

int run(int argc, char** argv) {
  const bool exitAfter = argc == 3 && std::string_view(argv[2]) == "exit";
  if (argc != 2 && !exitAfter) {
    std::fprintf(stderr, "usage: capture_until_killed <calls, 0 = until killed> [exit]\n");
    return 2;
  }
  const long stopAfter = std::atol(argv[1]);
  ncclUniqueId id;
  ncclComm_t comm;
  if (!ok(ncclGetUniqueId(&id), "ncclGetUniqueId") || !ok(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank")) {
    return 1;
  }
  say("ready", 0);
  constexpr size_t kCount = 256;
  std::vector<float> send(kCount, 1.0f), recv(kCount, 0.0f);
  for (long calls = 1;; ++calls) {
    ncclResult_t result = calls % 2 == 0
                              ? ncclBroadcast(send.data(), recv.data(), kCount, ncclFloat, 0, comm, nullptr)
                              : ncclAllReduce(send.data(), recv.data(), kCount, ncclFloat, ncclSum, comm, nullptr);
    if (!ok(result, "collective")) return 1;
    say("completed", calls);
    if (calls == stopAfter && exitAfter) return ok(ncclCommDestroy(comm), "ncclCommDestroy") ? 0 : 1;
    if (calls == stopAfter) raise(SIGTERM);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("capture_until_killed", [&] { return run(argc, argv); });
}
