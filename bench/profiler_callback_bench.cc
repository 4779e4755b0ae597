// What the profiler plugin's callbacks cost NCCL's launching thread, without NCCL: dlopens a
// libncclshim.so, takes its ncclProfiler_v5 table and raises, per iteration, the events NCCL 2.28
// raises on its calling thread for one communicator's grouped send + recv (nccl-tests sendrecv):
// GroupApi, 2 x P2pApi start/stop, Group, 2 x P2p task start/stop (the task naming its API event).
// Recording must be on (NCCLSHIM_TRACE_DIR), as in a traced job. Prints ns per iteration for
// consecutive passes of PASS_ITERS iterations: the first passes run over the plugin's event slots
// the first time (first touch of their memory), later ones over slots already used.
// Build: g++ -O2 -std=c++20 -I. bench/profiler_callback_bench.cc -ldl -o build/profiler_callback_bench
// Usage: NCCLSHIM_TRACE_DIR=/tmp/t profiler_callback_bench <libncclshim.so> [passes] [iters per pass] [p2p|coll]
// "coll" raises instead what one collective call of a one-process-per-GPU job (PyTorch) raises:
// GroupApi, CollApi start/stop, Group, Coll task start/stop (the task naming its API event).
#include <dlfcn.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "libshim/nccl_profiler_abi.h"

namespace abi = nshim::profiler_abi;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libncclshim.so> [passes] [iters per pass]\n", argv[0]);
    return 2;
  }
  int passes = argc > 2 ? std::atoi(argv[2]) : 8;
  int iters = argc > 3 ? std::atoi(argv[3]) : 2048;
  const bool coll = argc > 4 && std::string_view(argv[4]) == "coll";
  // PROFILER_BENCH_EVICT=<KiB> (coll only): between iterations, write that much other memory, as the
  // ~20 us of PyTorch and CUDA-driver work between two calls of a real job does, so that the
  // callbacks run on cold caches; then only the callbacks are timed (a clock read before and after
  // them; the cost of that pair, timed around nothing, is subtracted).
  // PROFILER_BENCH_EVICT_STRIDE=<bytes> (default 64, a cache line): write one byte per stride, e.g.
  // 4096 with a large EVICT to touch one byte per page: the TLB is evicted too.
  const char* evictEnv = std::getenv("PROFILER_BENCH_EVICT");
  const size_t evictBytes = evictEnv != nullptr ? std::strtoull(evictEnv, nullptr, 10) * 1024 : 0;
  const char* strideEnv = std::getenv("PROFILER_BENCH_EVICT_STRIDE");
  const size_t stride =
      strideEnv != nullptr && std::strtoull(strideEnv, nullptr, 10) > 0 ? std::strtoull(strideEnv, nullptr, 10) : 64;
  std::vector<char> evictBuffer(evictBytes + 64);
  auto evict = [&](int i) {
    for (size_t k = 0; k < evictBytes; k += stride) evictBuffer[k] = static_cast<char>(i + k);
  };
  // With eviction the callbacks are timed by the TSC (one instruction, no memory: a clock_gettime
  // around them would bring the vDSO's pages back into the TLB that the callbacks' own clock reads
  // need), scaled by the TSC's rate measured here over 50 ms.
  double clockPairNs = 0;
  double nsPerTick = 0;
  if (evictBytes != 0) {
    const auto wall0 = std::chrono::steady_clock::now();
    const uint64_t tsc0 = __rdtsc();
    while (std::chrono::steady_clock::now() - wall0 < std::chrono::milliseconds(50)) {}
    nsPerTick = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall0).count() /
                double(__rdtsc() - tsc0);
    double sum = 0;
    for (int i = 0; i < iters; ++i) {
      evict(i);
      const uint64_t t0 = __rdtsc();
      sum += double(__rdtsc() - t0) * nsPerTick;
    }
    clockPairNs = sum / iters;
    std::printf("evicting %zu KiB between iterations; the callbacks timed alone (%.1f ns of clock reads subtracted)\n",
                evictBytes / 1024, clockPairNs);
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto* table = static_cast<abi::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  if (table == nullptr) {
    std::fprintf(stderr, "no ncclProfiler_v5 in %s\n", argv[1]);
    return 1;
  }
  void* context = nullptr;
  int mask = 0;
  if (table->init(&context, 0x1234, &mask, "bench", 1, 2, 0, nullptr) != 0 || context == nullptr) {
    std::fprintf(stderr, "init failed or recording off (set NCCLSHIM_TRACE_DIR); mask %#x\n", mask);
    return 1;
  }
  std::printf("events %#x\n", mask);
  const char* funcs[2] = {"Send", "Recv"};
  for (int pass = 0; pass < passes; ++pass) {
    auto start = std::chrono::steady_clock::now();
    double timedNs = 0;
    for (int i = 0; i < iters && coll; ++i) {
      uint64_t t0 = 0;
      if (evictBytes != 0) {
        evict(i);
        t0 = __rdtsc();
      }
      abi::EventDescrV5 e{};
      void* group = nullptr;
      e.type = abi::kEventGroupApi;
      table->startEvent(context, &group, &e);
      void* api = nullptr;
      e = abi::EventDescrV5{};
      e.type = abi::kEventCollApi;
      e.collApi.func = "AllReduce";
      e.collApi.count = 2;
      e.collApi.datatype = "ncclFloat32";
      table->startEvent(context, &api, &e);
      if (api != nullptr) table->stopEvent(api);
      void* plan = nullptr;
      e = abi::EventDescrV5{};
      e.type = abi::kEventGroup;
      table->startEvent(context, &plan, &e);
      void* task = nullptr;
      e = abi::EventDescrV5{};
      e.type = abi::kEventColl;
      e.parentObj = api;
      e.rank = 0;
      e.coll.seqNumber = static_cast<uint64_t>(i);
      e.coll.func = "AllReduce";
      e.coll.count = 2;
      e.coll.datatype = "ncclFloat32";
      e.coll.nChannels = 2;
      e.coll.nWarps = 16;
      e.coll.algo = "RING";
      e.coll.proto = "LL";
      table->startEvent(context, &task, &e);
      if (task != nullptr) table->stopEvent(task);
      if (plan != nullptr) table->stopEvent(plan);
      if (group != nullptr) table->stopEvent(group);
      if (evictBytes != 0) { timedNs += double(__rdtsc() - t0) * nsPerTick - clockPairNs; }
    }
    for (int i = 0; i < iters && !coll; ++i) {
      abi::EventDescrV5 e{};
      void* group = nullptr;
      e.type = abi::kEventGroupApi;
      if (mask & abi::kEventGroupApi) table->startEvent(context, &group, &e);
      void* api[2] = {nullptr, nullptr};
      for (int k = 0; k < 2; ++k) {
        e = abi::EventDescrV5{};
        e.type = abi::kEventP2pApi;
        e.p2pApi.func = funcs[k];
        e.p2pApi.count = 2;
        e.p2pApi.datatype = "ncclFloat32";
        table->startEvent(context, &api[k], &e);
        if (api[k] != nullptr) table->stopEvent(api[k]);
      }
      void* plan = nullptr;
      e = abi::EventDescrV5{};
      e.type = abi::kEventGroup;
      table->startEvent(context, &plan, &e);
      void* task[2] = {nullptr, nullptr};
      for (int k = 0; k < 2; ++k) {
        e = abi::EventDescrV5{};
        e.type = abi::kEventP2p;
        e.parentObj = api[k];
        e.rank = 0;
        e.p2p.func = funcs[k];
        e.p2p.count = 2;
        e.p2p.datatype = "ncclFloat32";
        e.p2p.peer = 1;
        e.p2p.nChannels = 1;
        table->startEvent(context, &task[k], &e);
      }
      for (int k = 0; k < 2; ++k) {
        if (task[k] != nullptr) table->stopEvent(task[k]);
      }
      if (plan != nullptr) table->stopEvent(plan);
      if (group != nullptr) table->stopEvent(group);
    }
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    if (evictBytes != 0) ns = timedNs;
    std::printf("pass %d: %.1f ns per iteration (%s)\n", pass, ns / iters,
                coll ? "1 API + 1 task event" : "2 API + 2 task events");
  }
  table->finalize(context);
  return 0;
}
