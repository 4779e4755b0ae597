// Recorder tests: records from several threads read back exactly; file naming with the global
// rank; recording off writes nothing; and in forked children the exit flush, the flush at comm
// destroy, a SIGTERM after N records (the file holds all N), chaining to a previous SIGTERM
// handler, and a fork of a recording process (each process writes its own file). The process
// recorder is only ever configured inside children, so this test binary itself never records.
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <set>
#include <thread>

#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/recorder.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

using testing::forkChild;
using testing::TempDir;
using testing::variedComm;
using testing::variedOp;
using testing::waitChild;

RecorderConfig configFor(const TempDir& dir) {
  RecorderConfig config;
  config.dir = dir.path();
  return config;
}

TEST_CASE("records from several threads are read back exactly", "[trace]") {
  TempDir dir;
  RecorderConfig config = configFor(dir);
  config.ringRecords = 256;  // smaller than what each thread writes: the writer must keep up
  auto recorder = std::make_unique<Recorder>(config);
  REQUIRE(recorder->active());
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      recorder->recordComm(variedComm(0xabc0000000000000ull | uint64_t(t), t % 4, 4, CommEvent::kInit));
      for (uint64_t i = 0; i < kPerThread; ++i) recorder->recordOp(variedOp(t, i));
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(recorder->flush().ok());

  auto file = readTraceFile(recorder->path());
  REQUIRE(file.ok());
  CHECK(file->comms.size() == size_t(kThreads));
  REQUIRE(file->ops.size() == kThreads * kPerThread);
  CHECK_FALSE(file->hasFooter);
  CHECK(file->dropped == 0);
  // Every record exactly once, each thread's records in its order, n unique.
  std::vector<uint64_t> next(kThreads, 0);
  std::set<uint64_t> ns;
  for (const OpEntry& e : file->ops) {
    int t = static_cast<int>(e.record.commId & 0xff);
    REQUIRE(t < kThreads);
    OpRecord expected = variedOp(t, next[t]++);
    REQUIRE(std::memcmp(&expected, &e.record, sizeof(OpRecord)) == 0);
    CHECK(ns.insert(e.n).second);
  }
  for (const CommEntry& e : file->comms) {
    CommRecord expected = variedComm(e.record.commId, e.record.rank, 4, CommEvent::kInit);
    CHECK(std::memcmp(&expected, &e.record, sizeof(CommRecord)) == 0);
    CHECK(ns.insert(e.n).second);
  }
  // The writer numbers the lines as it writes them: every number from 0, none skipped.
  REQUIRE(ns.size() == kThreads * (kPerThread + 1));
  CHECK(*ns.begin() == 0);
  CHECK(*ns.rbegin() == ns.size() - 1);
  CHECK(file->header.pid == getpid());
  CHECK(file->header.version == kTraceFormatVersion);

  REQUIRE(recorder->close().ok());
  auto closed = readTraceFile(recorder->path());
  REQUIRE(closed.ok());
  CHECK(closed->endsWithFooter);
  CHECK(closed->footer.records == kThreads * (kPerThread + 1));
  CHECK(std::string(closed->footer.reason) == "close");
  CHECK(closed->endDescription() == "clean");
}

TEST_CASE("threads' records merge by their end times, each thread's in its order", "[trace]") {
  TempDir dir;
  RecorderConfig config = configFor(dir);
  config.drainIntervalNs = 60'000'000'000;  // no drain between the pushes: one merge at the flush
  auto recorder = std::make_unique<Recorder>(config);
  REQUIRE(recorder->active());
  // Thread 0 hands over two calls first: one that ends an hour from now, then one that ended long
  // ago (out of time order within the thread). Thread 1 hands over a call that ended now, afterwards.
  OpRecord late = variedOp(0, 0);
  late.hostEndNs = nowNs() + 3'600'000'000'000;
  OpRecord early = variedOp(0, 1);
  early.hostEndNs = 5;
  OpRecord now = variedOp(1, 0);
  now.hostEndNs = nowNs();
  std::thread first([&] {
    recorder->recordCallOp(late);
    recorder->recordCallOp(early);
  });
  first.join();
  std::thread second([&] { recorder->recordOp(now); });
  second.join();
  REQUIRE(recorder->flush().ok());
  auto file = readTraceFile(recorder->path());
  REQUIRE(file.ok());
  REQUIRE(file->ops.size() == 3);
  // Thread 1's record is merged before thread 0's call that ends later; thread 0's two keep their
  // order; the lines are numbered 0, 1, 2 as written.
  CHECK(file->ops[0].record.hostEndNs == now.hostEndNs);
  CHECK(file->ops[1].record.hostEndNs == late.hostEndNs);
  CHECK(file->ops[2].record.hostEndNs == early.hostEndNs);
  for (size_t i = 0; i < file->ops.size(); ++i) CHECK(file->ops[i].n == i);
}

TEST_CASE("an op handed over with bytes left to the writer is written with traceBytes", "[trace]") {
  TempDir dir;
  auto recorder = std::make_unique<Recorder>(configFor(dir));
  REQUIRE(recorder->active());
  std::vector<OpRecord> expected;
  for (uint64_t i = 0; i < 200; ++i) {
    OpRecord r = variedOp(0, i);
    expected.push_back(r);                     // variedOp sets bytes = traceBytes(...)
    if (i % 2 == 0) r.bytes = kBytesByWriter;  // as the API frame hands it over
    recorder->recordOp(r);
  }
  REQUIRE(recorder->flush().ok());
  auto file = readTraceFile(recorder->path());
  REQUIRE(file.ok());
  REQUIRE(file->ops.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(file->ops[i].record.bytes != kBytesByWriter);
    REQUIRE(std::memcmp(&expected[i], &file->ops[i].record, sizeof(OpRecord)) == 0);
  }
}

TEST_CASE("split records and late records after close round-trip", "[trace]") {
  TempDir dir;
  Recorder recorder(configFor(dir));
  CommRecord split = variedComm(commIdForSplit(0x1111, -7, 3), 1, 2, CommEvent::kSplit);
  recorder.recordComm(split);
  recorder.recordOp(variedOp(0, 17));  // PreMulSum
  REQUIRE(recorder.close().ok());
  recorder.recordOp(variedOp(0, 18));  // after close: written at once, with a new footer
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  REQUIRE(file->comms.size() == 1);
  CHECK(std::memcmp(&file->comms[0].record, &split, sizeof(split)) == 0);
  REQUIRE(file->ops.size() == 2);
  OpRecord premul = variedOp(0, 17);
  CHECK(std::memcmp(&file->ops[0].record, &premul, sizeof(premul)) == 0);
  CHECK(file->endsWithFooter);
  CHECK(file->footer.records == 3);
}

TEST_CASE("the trace file is named with the global rank once it is known", "[trace]") {
  TempDir dir;
  SECTION("from the first communicator") {
    Recorder recorder(configFor(dir));
    recorder.recordOp(makeOpRecord(OpCode::kGroupStart));
    REQUIRE(recorder.flush().ok());
    std::string before = recorder.path();
    CHECK(before.find("-rank") == std::string::npos);
    CommRecord init = variedComm(77, 3, 4, CommEvent::kInit);
    init.globalRank = kNoRank;
    recorder.recordComm(init);
    REQUIRE(recorder.close().ok());
    std::string after = recorder.path();
    CHECK(after.size() > 12);
    CHECK(after.substr(after.size() - 12) == "-rank3.jsonl");
    CHECK(access(before.c_str(), F_OK) != 0);
    auto file = readTraceFile(after);
    REQUIRE(file.ok());
    CHECK(file->comms[0].record.globalRank == 3);
    CHECK(file->globalRank() == 3);
    CHECK(dir.files().size() == 1);
  }
  SECTION("from the launcher, with a %r pattern") {
    RecorderConfig config = configFor(dir);
    config.namePattern = "trace-%r-%p";
    config.envGlobalRank = 5;
    Recorder recorder(config);
    recorder.recordComm(variedComm(77, 1, 4, CommEvent::kInit));
    REQUIRE(recorder.close().ok());
    CHECK(recorder.path() == dir.path() + "/trace-5-" + std::to_string(getpid()) + ".jsonl");
  }
}

TEST_CASE("recording off writes no file and costs no ring", "[trace]") {
  TempDir dir;
  Recorder off(RecorderConfig{});
  CHECK_FALSE(off.active());
  off.recordOp(variedOp(0, 1));
  CHECK(off.flush().ok());
  CHECK(off.path().empty());
  // The process recorder with NCCLSHIM_TRACE_DIR unset, in a child.
  pid_t pid = forkChild([&] {
    unsetenv("NCCLSHIM_TRACE_DIR");
    for (int i = 0; i < 100; ++i) recordOp(variedOp(0, i));
    return enabled() || globalRecorder() != nullptr ? 1 : 0;
  });
  int status = waitChild(pid, 20);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  // An active recorder that records nothing leaves no file either.
  { Recorder idle(configFor(dir)); }
  CHECK(dir.files().empty());
}

// The process recorder, configured from the environment inside a child.
void setChildEnv(const TempDir& dir, const char* flushMs) {
  setenv("NCCLSHIM_TRACE_DIR", dir.path().c_str(), 1);
  setenv("NCCLSHIM_TRACE_FLUSH_MS", flushMs, 1);
  unsetenv("NCCLSHIM_TRACE_NAME");
  for (const char* v : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(v);
}

Result<TraceFile> onlyFile(const TempDir& dir) {
  auto files = dir.files();
  if (files.size() != 1) return Status(Code::kInternal, "expected one file, found " + std::to_string(files.size()));
  return readTraceFile(files[0]);
}

TEST_CASE("exit and comm-destroy flush in a forked child", "[trace]") {
  TempDir dir;
  constexpr int kRecords = 500;
  SECTION("exit() writes everything and a footer") {
    pid_t pid = forkChild([&] {
      setChildEnv(dir, "60000");  // the writer would not drain on its own before exit
      setenv("RANK", "6", 1);
      recordComm(variedComm(9, 0, 1, CommEvent::kInit));
      for (int i = 0; i < kRecords; ++i) recordOp(variedOp(0, i));
      std::exit(0);
      return 0;
    });
    int status = waitChild(pid, 20);
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    auto file = onlyFile(dir);
    REQUIRE(file.ok());
    CHECK(file->ops.size() == size_t(kRecords));
    CHECK(file->endsWithFooter);
    CHECK(std::string(file->footer.reason) == "exit");
    CHECK(file->globalRank() == 6);
    CHECK(file->header.pid == pid);
    CHECK(file->path.find("-rank6.jsonl") != std::string::npos);
  }
  SECTION("flush() at comm destroy, then _exit without exit handlers") {
    pid_t pid = forkChild([&] {
      setChildEnv(dir, "60000");
      recordComm(variedComm(9, 2, 4, CommEvent::kInit));
      for (int i = 0; i < kRecords; ++i) recordOp(variedOp(0, i));
      recordComm(variedComm(9, 2, 4, CommEvent::kDestroy));
      return flush().ok() ? 0 : 1;  // forkChild ends with _exit: no atexit, no footer
    });
    int status = waitChild(pid, 20);
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    auto file = onlyFile(dir);
    REQUIRE(file.ok());
    CHECK(file->ops.size() == size_t(kRecords));
    CHECK(file->comms.size() == 2);
    CHECK_FALSE(file->hasFooter);
    CHECK(file->globalRank() == 2);
  }
}

TEST_CASE("SIGTERM after N records: the file holds all N", "[trace]") {
  TempDir dir;
  constexpr int kRecords = 2000;  // below 3/4 of the ring: only the signal handler writes them
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t pid = forkChild([&] {
    signal(SIGTERM, SIG_DFL);  // the test runner's own handler is inherited: not a real process's
    setChildEnv(dir, "60000");
    recordComm(variedComm(9, 0, 2, CommEvent::kInit));
    for (int i = 0; i < kRecords; ++i) recordOp(variedOp(0, i));
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) return 2;
    for (;;) pause();
  });
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  kill(pid, SIGTERM);
  int status = waitChild(pid, 20);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  auto file = onlyFile(dir);
  REQUIRE(file.ok());
  CHECK(file->ops.size() == size_t(kRecords));
  CHECK(file->endsWithFooter);
  CHECK(std::string(file->footer.reason) == "signal");
  CHECK(file->footer.signal == SIGTERM);
}

volatile sig_atomic_t gChildSawTerm = 0;
void childTermHandler(int) { gChildSawTerm = 1; }

TEST_CASE("SIGTERM flushes, then calls the handler installed before", "[trace]") {
  TempDir dir;
  constexpr int kRecords = 300;
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t pid = forkChild([&] {
    signal(SIGTERM, &childTermHandler);
    setChildEnv(dir, "60000");
    recordComm(variedComm(9, 0, 2, CommEvent::kInit));  // configures the recorder: chains ours
    for (int i = 0; i < kRecords; ++i) recordOp(variedOp(0, i));
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) return 2;
    Deadline deadline = Deadline::after(10);
    while (!gChildSawTerm && !deadline.expired()) usleep(1000);
    return gChildSawTerm ? 42 : 3;  // _exit: the file must already hold the records
  });
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  kill(pid, SIGTERM);
  int status = waitChild(pid, 20);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);
  auto file = onlyFile(dir);
  REQUIRE(file.ok());
  CHECK(file->ops.size() == size_t(kRecords));
  CHECK_FALSE(file->hasFooter);  // the process went on: no footer yet
}

TEST_CASE("a forked child of a recording process writes its own file", "[trace]") {
  TempDir dir;
  auto recorder = std::make_unique<Recorder>(configFor(dir));
  for (int i = 0; i < 10; ++i) recorder->recordOp(variedOp(1, i));
  pid_t pid = forkChild([&] {
    std::thread worker([&] {
      for (int i = 0; i < 5; ++i) recorder->recordOp(variedOp(2, i));
    });
    worker.join();
    for (int i = 5; i < 8; ++i) recorder->recordOp(variedOp(2, i));
    return recorder->close().ok() ? 0 : 1;
  });
  for (int i = 10; i < 20; ++i) recorder->recordOp(variedOp(1, i));
  int status = waitChild(pid, 20);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  REQUIRE(recorder->close().ok());
  auto files = dir.files();
  REQUIRE(files.size() == 2);
  int checked = 0;
  for (const std::string& path : files) {
    auto file = readTraceFile(path);
    REQUIRE(file.ok());
    CHECK(file->endsWithFooter);
    if (file->header.pid == getpid()) {
      REQUIRE(file->ops.size() == 20);
      for (size_t i = 0; i < 20; ++i) CHECK(file->ops[i].record.seq == i);
      ++checked;
    } else {
      CHECK(file->header.pid == pid);
      CHECK(file->header.ppid == getpid());
      REQUIRE(file->ops.size() == 8);
      for (size_t i = 0; i < 8; ++i) CHECK(file->ops[i].record.commId == (0xabc0000000000000ull | 2));
      CHECK(file->ops.front().n == 0);  // the child numbers its own records
      ++checked;
    }
  }
  CHECK(checked == 2);
}

}  // namespace
}  // namespace nshim::trace
