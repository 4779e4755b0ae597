// Hot-path cost of an NCCL call: nanoseconds per call of ncclAllReduce (count 1) and of ncclSend
// inside an open group, against whatever those symbols bind to: the fake libnccl.so.2 it is linked
// with (tests/shim/fake_nccl.c, which does almost nothing), or libncclshim.so in front of it
// (LD_PRELOAD, NCCLSHIM_MODE=forward). bench/run_hotpath_bench.sh runs both and prints the difference.
//   hotpath_bench [calls (1000000)] [batch (1000)] [gap_us (0)]
// Prints one line per case: "<case> median_ns=.. p10_ns=.. p90_ns=.. calls=..", the statistics over
// batches of `batch` calls timed with CLOCK_MONOTONIC. A gap (untimed sleep) between batches models
// a job's real call rate and lets a trace writer keep up; without it, recording measures the writer's
// sustained throughput instead of the cost a call pays.
// HOTPATH_EVICT=<KiB> (with HOTPATH_EVICT_STRIDE=<bytes>, default 64): each call runs alone after
// that much other memory was written (stride 4096 over a large size: one byte per page, the TLB
// evicted too), as a job's calls run on caches and a TLB its own work has cooled; each call is
// timed with the TSC (no memory touched), `calls` of them, one line per case as above.
#include <nccl.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

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

template <typename Batch>
void measure(const char* name, long calls, long batch, long gapUs, Batch&& runBatch) {
  for (int i = 0; i < 20; ++i) runBatch(batch);  // warm up: first-call resolution, caches
  std::vector<double> perCall;
  for (long done = 0; done < calls; done += batch) {
    int64_t start = nowNs();
    runBatch(batch);
    perCall.push_back(double(nowNs() - start) / double(batch));
    if (gapUs > 0) usleep(static_cast<useconds_t>(gapUs));
  }
  std::sort(perCall.begin(), perCall.end());
  auto at = [&](double q) { return perCall[size_t(q * double(perCall.size() - 1))]; };
  std::printf("%s median_ns=%.2f p10_ns=%.2f p90_ns=%.2f calls=%ld\n", name, at(0.5), at(0.1), at(0.9), calls);
}

// The cold mode (HOTPATH_EVICT): one call at a time after the eviction, timed with the TSC.
template <typename Call>
void measureCold(const char* name, long calls, size_t evictBytes, size_t stride, Call&& call) {
  static std::vector<char> other;
  other.resize(evictBytes + 64);
  const int64_t wall0 = nowNs();
  const uint64_t tsc0 = __rdtsc();
  while (nowNs() - wall0 < 50'000'000) {}
  const double nsPerTick = double(nowNs() - wall0) / double(__rdtsc() - tsc0);
  for (int i = 0; i < 20; ++i) call();
  std::vector<double> perCall;
  for (long k = 0; k < calls; ++k) {
    for (size_t b = 0; b < evictBytes; b += stride) other[b] = static_cast<char>(k + b);
    const uint64_t t0 = __rdtsc();
    call();
    perCall.push_back(double(__rdtsc() - t0) * nsPerTick);
  }
  std::sort(perCall.begin(), perCall.end());
  auto at = [&](double q) { return perCall[size_t(q * double(perCall.size() - 1))]; };
  std::printf("%s median_ns=%.2f p10_ns=%.2f p90_ns=%.2f calls=%ld\n", name, at(0.5), at(0.1), at(0.9), calls);
}

int run(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
  long batch = argc > 2 ? std::atol(argv[2]) : 1000;
  long gapUs = argc > 3 ? std::atol(argv[3]) : 0;
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    std::fprintf(stderr, "hotpath_bench: cannot create a communicator: %s\n", ncclGetLastError(nullptr));
    return 1;
  }
  float send = 1.0f;
  float recv = 0.0f;
  bool ok = true;
  if (const char* evict = std::getenv("HOTPATH_EVICT")) {
    const char* strideText = std::getenv("HOTPATH_EVICT_STRIDE");
    const size_t stride = strideText != nullptr && std::atol(strideText) > 0 ? std::atol(strideText) : 64;
    const size_t bytes = size_t(std::atol(evict)) * 1024;
    measureCold("ncclAllReduce(count=1)", calls, bytes, stride,
                [&] { ok &= ncclAllReduce(&send, &recv, 1, ncclFloat, ncclSum, comm, nullptr) == ncclSuccess; });
    ncclCommDestroy(comm);
    return ok ? 0 : 1;
  }
  measure("ncclAllReduce(count=1)", calls, batch, gapUs, [&](long n) {
    for (long i = 0; i < n; ++i) ok &= ncclAllReduce(&send, &recv, 1, ncclFloat, ncclSum, comm, nullptr) == ncclSuccess;
  });
  measure("ncclSend(in-group)", calls, batch, gapUs, [&](long n) {
    ncclGroupStart();
    for (long i = 0; i < n; ++i) ok &= ncclSend(&send, 1, ncclFloat, 0, comm, nullptr) == ncclSuccess;
    ncclGroupEnd();
  });
  ncclCommDestroy(comm);
  if (!ok) {
    std::fprintf(stderr, "hotpath_bench: a call failed\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("hotpath_bench", [&] { return run(argc, argv); });
}
