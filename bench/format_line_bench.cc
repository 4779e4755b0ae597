// What the trace writer spends formatting one line: ns per nccl_task line (a p2p task as the
// profiler plugin records it, 332 bytes; op lines are made the same way, trace/line_buffer.h), over
// N lines (default 1,000,000) in one thread, the same record each time. Used to compare
// trace/line_buffer.h builds on the GPU machine (tests/gpu/g2_overhead.sh, stage diag2, runs them
// as fmtbench-old / fmtbench-new).
// Build: g++ -O2 -std=c++20 -I. bench/format_line_bench.cc build/libtrace.a build/libcollectives.a build/libtransport.a build/libcommon.a \
//          -o build/format_line_bench
// Usage: format_line_bench [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "trace/trace_format.h"
#include "trace/trace_record.h"

using namespace nshim::trace;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000000;
  TaskRecord t = makeTaskRecord(TaskKind::kP2p);
  t.commId = 0x1234567890;
  t.seq = 12345;
  t.ncclCommHash = 0xabcdef0123456789ull;
  t.count = 2;
  t.startNs = 123456789012345;
  t.endNs = t.startNs + 500;
  t.rank = 0;
  t.nranks = 2;
  t.nnodes = 1;
  t.rootOrPeer = 1;
  t.datatype = 7;
  t.flags = kTaskJoined;
  t.nChannels = 1;
  std::snprintf(t.func, sizeof(t.func), "Send");
  static char line[4096];
  size_t bytes = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) bytes += formatTaskLine(t, static_cast<uint64_t>(i), line, sizeof(line));
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("task line: %.1f ns, %zu bytes\n", ns / n, bytes / static_cast<size_t>(n));
  std::printf("%.*s", static_cast<int>(bytes / static_cast<size_t>(n)), line);
  return 0;
}
