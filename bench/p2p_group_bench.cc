// Grouped point-to-point cost as nccl-tests `sendrecv_perf -g 2` pays it: one thread drives two
// communicators of one ncclCommInitAll and each iteration makes the calls nccl-tests 2.19 makes:
//   ncclGroupStart; for each comm { ncclCommCount; ncclCommUserRank; ncclGroupStart; ncclSend;
//   ncclRecv; ncclGroupEnd }; ncclGroupEnd
// (14 API calls; 10 of them are recorded: 4 operations and the group starts and ends). Linked against the fake libnccl.so.2
// (tests/shim/fake_nccl.c); bench/run_p2p_group_bench.sh runs it with no shim, through the shim
// forwarding only and through the shim recording every call, and prints the difference.
//   p2p_group_bench [iterations per window (20)] [windows (2000)] [work_ns (15000)] [gap_us (200)]
// work_ns: a busy wait after each iteration standing for the real NCCL's own time (13-19 us per
// iteration on 2xH200), so that calls come at nccl-tests' rate; it is subtracted from the figures.
// gap_us: an untimed sleep between windows (nccl-tests synchronises and checks between sizes).
// Prints "p2p_iteration median_ns=.. p10_ns=.. p90_ns=.. min_ns=.. windows=..": per iteration,
// over windows, without the busy wait.
#include <nccl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../common/main_fence.h"  // built without -I.

namespace {

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Busy-waits `ns` from `from`; returns the time it ended.
int64_t spinUntil(int64_t from, int64_t ns) {
  int64_t now = nowNs();
  while (now - from < ns) now = nowNs();
  return now;
}

int run(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 20;
  long windows = argc > 2 ? std::atol(argv[2]) : 2000;
  long workNs = argc > 3 ? std::atol(argv[3]) : 15000;
  long gapUs = argc > 4 ? std::atol(argv[4]) : 200;
  ncclComm_t comms[2] = {nullptr, nullptr};
  const int devices[2] = {0, 1};
  if (ncclCommInitAll(comms, 2, devices) != ncclSuccess) {
    std::fprintf(stderr, "p2p_group_bench: ncclCommInitAll failed: %s\n", ncclGetLastError(nullptr));
    return 1;
  }
  std::vector<char> buffers(4 * 1024);
  char* send[2] = {buffers.data(), buffers.data() + 1024};
  char* recv[2] = {buffers.data() + 2048, buffers.data() + 3072};
  bool ok = true;
  auto iteration = [&] {
    ok &= ncclGroupStart() == ncclSuccess;
    for (int g = 0; g < 2; ++g) {
      int nranks = 0;
      int rank = 0;
      ok &= ncclCommCount(comms[g], &nranks) == ncclSuccess;
      ok &= ncclCommUserRank(comms[g], &rank) == ncclSuccess;
      ok &= ncclGroupStart() == ncclSuccess;
      ok &= ncclSend(send[g], 8, ncclChar, (rank + 1) % nranks, comms[g], nullptr) == ncclSuccess;
      ok &= ncclRecv(recv[g], 8, ncclChar, (rank + nranks - 1) % nranks, comms[g], nullptr) == ncclSuccess;
      ok &= ncclGroupEnd() == ncclSuccess;
    }
    ok &= ncclGroupEnd() == ncclSuccess;
  };
  for (int i = 0; i < 100; ++i) iteration();  // warm up: symbol resolution, thread ring, caches
  std::vector<double> perIteration;
  perIteration.reserve(static_cast<size_t>(windows));
  for (long w = 0; w < windows; ++w) {
    int64_t calls = 0;  // time inside the calls only, the busy wait excluded
    for (long i = 0; i < iterations; ++i) {
      int64_t start = nowNs();
      iteration();
      int64_t end = nowNs();
      calls += end - start;
      if (workNs > 0) spinUntil(end, workNs);
    }
    perIteration.push_back(double(calls) / double(iterations));
    if (gapUs > 0) usleep(static_cast<useconds_t>(gapUs));
  }
  std::sort(perIteration.begin(), perIteration.end());
  auto at = [&](double q) { return perIteration[size_t(q * double(perIteration.size() - 1))]; };
  std::printf("p2p_iteration median_ns=%.2f p10_ns=%.2f p90_ns=%.2f min_ns=%.2f windows=%ld\n", at(0.5), at(0.1),
              at(0.9), perIteration.front(), windows);
  ncclCommDestroy(comms[0]);
  ncclCommDestroy(comms[1]);
  if (!ok) {
    std::fprintf(stderr, "p2p_group_bench: a call failed\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("p2p_group_bench", [&] { return run(argc, argv); });
}
