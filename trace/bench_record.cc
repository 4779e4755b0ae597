// bench_record: nanoseconds per recordOp on the hot path, the median over batches of calls, with
// recording off (the process recorder with NCCLSHIM_TRACE_DIR unset: one load and a branch) and on
// (a Recorder writing JSON Lines to a temporary directory), from one thread and from several at
// once. Also reports how fast the writer drained and that no record was lost.
// Between batches the producers pause (--pause-us, default 2000) so that the writer keeps up as it
// does at real NCCL call rates; --pause-us 0 measures the writer-bound worst case instead.
// --replay FILE instead writes a trace's records again, as fast as the writer takes them, once plain
// and once compressed (NCCLSHIM_TRACE_COMPRESS=zstd): the file sizes, their ratio and the writer's
// records per second each way.
//   bench_record [--batches N] [--batch N] [--threads N] [--pause-us N] [--keep] | --replay FILE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/main_fence.h"
#include "trace/recorder.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

struct Options {
  int batches = 300;
  int batch = 1000;
  int threads = 2;
  int pauseUs = 2000;
  bool keep = false;
  std::string replay;  // --replay FILE
};

OpRecord sampleRecord() {
  OpRecord r = makeOpRecord(OpCode::kAllReduce);
  r.commId = 0x1234;
  r.rank = 0;
  r.nranks = 8;
  r.count = 1 << 20;
  r.datatype = 7;
  r.redop = 0;
  r.bytes = traceBytes(r.op, r.count, r.datatype, r.nranks);
  return r;
}

// Median ns per call of `record` over opts.batches batches of opts.batch calls.
template <typename Fn>
double medianNsPerCall(const Options& opts, Fn&& record) {
  std::vector<double> perCall;
  OpRecord r = sampleRecord();
  uint64_t seq = 0;
  for (int b = 0; b < opts.batches; ++b) {
    int64_t start = nowNs();
    for (int i = 0; i < opts.batch; ++i) {
      r.seq = seq++;
      record(r);
    }
    perCall.push_back(double(nowNs() - start) / opts.batch);
    // Let the writer keep up, as it does at real NCCL call rates (the pause is not timed).
    if (opts.pauseUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(opts.pauseUs));
  }
  std::sort(perCall.begin(), perCall.end());
  return perCall[perCall.size() / 2];
}

// One pass of `file`'s records through a Recorder (zstd or not) into a fresh directory: the
// file's size and the writer's records per second (from the first record to the close).
struct ReplayFigures {
  uint64_t bytes = 0;
  uint64_t records = 0;
  double seconds = 0;
  bool exact = false;
};

ReplayFigures replayThrough(const TraceFile& file, bool compress) {
  ReplayFigures out;
  char dir[] = "/tmp/ncclshim-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) return out;
  RecorderConfig config;
  config.dir = dir;
  config.ringRecords = 1 << 16;
  config.fullWaitNs = 10'000'000'000;  // wait for the writer, never drop: its speed is measured
  config.compress = compress;
  std::string path;
  {
    Recorder recorder(config);
    const int64_t start = nowNs();
    for (const CommEntry& c : file.comms) recorder.recordComm(c.record);
    for (const OpEntry& o : file.ops) recorder.recordOp(o.record);
    (void)recorder.close();
    out.seconds = double(nowNs() - start) * 1e-9;
    out.records = recorder.stats().records;
    path = recorder.path();
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) out.bytes = static_cast<uint64_t>(st.st_size);
  auto back = readTraceFile(path);
  out.exact = back.ok() && back->ops.size() == file.ops.size() && back->endsWithFooter;
  unlink(path.c_str());
  rmdir(dir);
  return out;
}

int runReplay(const Options& opts) {
  auto file = readTraceFile(opts.replay);
  if (!file.ok()) {
    std::fprintf(stderr, "bench_record: %s\n", file.status().message().c_str());
    return 2;
  }
  const ReplayFigures plain = replayThrough(*file, false);
  const ReplayFigures zstd = replayThrough(*file, true);
  std::printf("%s: %llu records\n", opts.replay.c_str(), static_cast<unsigned long long>(plain.records));
  std::printf("plain: %llu bytes (%.0f B per record), writer %.2f M records/s%s\n",
              static_cast<unsigned long long>(plain.bytes), double(plain.bytes) / double(plain.records),
              plain.records / plain.seconds * 1e-6, plain.exact ? "" : " (MISMATCH reading it back)");
  std::printf("zstd:  %llu bytes (%.1f B per record), writer %.2f M records/s%s; ratio %.1f\n",
              static_cast<unsigned long long>(zstd.bytes), double(zstd.bytes) / double(zstd.records),
              zstd.records / zstd.seconds * 1e-6, zstd.exact ? "" : " (MISMATCH reading it back)",
              double(plain.bytes) / double(zstd.bytes));
  return plain.exact && zstd.exact ? 0 : 1;
}

int run(const Options& opts) {
  if (!opts.replay.empty()) return runReplay(opts);
  unsetenv("NCCLSHIM_TRACE_DIR");
  double off = medianNsPerCall(opts, [](const OpRecord& r) { trace::recordOp(r); });
  std::printf("recordOp, recording off:            %7.2f ns/record (median of %d batches of %d)\n", off, opts.batches,
              opts.batch);

  char dir[] = "/tmp/ncclshim-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  RecorderConfig config;
  config.dir = dir;
  config.ringRecords = 1 << 16;
  uint64_t expected = 0;
  int64_t writeStart = nowNs();
  {
    Recorder recorder(config);
    double on = medianNsPerCall(opts, [&](const OpRecord& r) { recorder.recordOp(r); });
    expected += uint64_t(opts.batches) * opts.batch;
    std::printf("recordOp, recording on, 1 thread:   %7.2f ns/record\n", on);

    std::vector<double> perThread(opts.threads);
    std::vector<std::thread> threads;
    for (int t = 0; t < opts.threads; ++t) {
      threads.emplace_back(
          [&, t] { perThread[t] = medianNsPerCall(opts, [&](const OpRecord& r) { recorder.recordOp(r); }); });
    }
    for (auto& th : threads) th.join();
    expected += uint64_t(opts.threads) * opts.batches * opts.batch;
    std::sort(perThread.begin(), perThread.end());
    std::printf("recordOp, recording on, %d threads:  %7.2f ns/record (median thread)\n", opts.threads,
                perThread[perThread.size() / 2]);
    Status closed = recorder.close();
    RecorderStats stats = recorder.stats();
    double seconds = double(nowNs() - writeStart) * 1e-9;
    std::printf("writer: %llu records written in %.3f s including the run (%.0f records/s), %llu dropped%s\n",
                static_cast<unsigned long long>(stats.records), seconds, stats.records / seconds,
                static_cast<unsigned long long>(stats.dropped), closed.ok() ? "" : " (write error)");
    auto file = readTraceFile(recorder.path());
    bool exact = file.ok() && file->ops.size() == expected && file->endsWithFooter;
    std::printf("read back: %s (%zu of %llu records)\n", exact ? "all records present" : "MISMATCH",
                file.ok() ? file->ops.size() : size_t(0), static_cast<unsigned long long>(expected));
    if (!opts.keep) {
      unlink(recorder.path().c_str());
      rmdir(dir);
    }
    return exact ? 0 : 1;
  }
}

}  // namespace
}  // namespace nshim::trace

int main(int argc, char** argv) {
  nshim::trace::Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--batches" && hasValue) opts.batches = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--batch" && hasValue) opts.batch = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--threads" && hasValue) opts.threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--pause-us" && hasValue) opts.pauseUs = std::max(0, std::atoi(argv[++i]));
    else if (arg == "--keep") opts.keep = true;
    else if (arg == "--replay" && hasValue) opts.replay = argv[++i];
    else {
      std::fprintf(
          stderr,
          "usage: bench_record [--batches N] [--batch N] [--threads N] [--pause-us N] [--keep] | --replay FILE\n");
      return 2;
    }
  }
  return nshim::runFenced("bench_record", [&] { return nshim::trace::run(opts); });
}
