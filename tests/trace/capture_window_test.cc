// The recording window's logic (trace/capture_window.h) and the online iteration counter
// (trace/online_iterations.h) on synthetic call sequences: the period is locked after a warm-up
// and its boundaries are the detected iterations; a window of iterations opens and closes at
// them, or at the job's marks, which win; call:N, the operator's requests and the start's
// spelling.
#include <string>
#include <vector>

#include "tests/catch.h"
#include "trace/call_period.h"
#include "trace/capture_window.h"
#include "trace/online_iterations.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

// Feeds `calls` (one signature per character); the boundaries' call indices.
std::vector<size_t> boundariesOf(OnlineIterations& counter, const std::string& calls) {
  std::vector<size_t> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (counter.feed(static_cast<uint64_t>(calls[i]))) out.push_back(i);
  }
  return out;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST_CASE("online iterations: the period locks after the warm-up and boundaries follow it", "[window]") {
  OnlineIterations counter;
  const std::string warmup = "xyz", step = "abcdefg";  // 3 set-up calls, steps of 7 calls
  const std::vector<size_t> boundaries = boundariesOf(counter, warmup + repeat(step, 40));
  REQUIRE(counter.locked());
  CHECK(counter.period() == 7);
  // Locked at 64 calls (3 + 61: 8 whole steps and 5 calls): every later step start is a boundary.
  REQUIRE(!boundaries.empty());
  CHECK(boundaries.front() == 3 + 7 * 9);
  for (size_t i = 1; i < boundaries.size(); ++i) CHECK(boundaries[i] - boundaries[i - 1] == 7);
  CHECK(counter.iteration() == 39);  // the last call is in the 40th step (from 0)

  // The sequence changes (an evaluation phase): unlocked, learned again, the count goes on.
  boundariesOf(counter, repeat("PQ", 40) + repeat(step, 30));
  CHECK(counter.unlocks() >= 1);
  CHECK(counter.locked());
  CHECK(counter.iteration() > 40);

  OnlineIterations sweep(256);
  std::string sizes;
  for (int i = 0; i < 300; ++i) sizes += static_cast<char>(i % 250 + 1);
  boundariesOf(sweep, sizes);
  CHECK_FALSE(sweep.locked());
  CHECK(sweep.gaveUp());
}

TEST_CASE("call period: tail start and whole iterations", "[window]") {
  const std::string calls = "xy" + repeat("abc", 4);
  std::vector<uint64_t> s(calls.begin(), calls.end());
  CallPeriod p = findCallPeriod(s.data(), s.size());
  CHECK(p.found);
  CHECK(p.period == 3);
  CHECK(p.tailStart == 2);
  CHECK(p.iterations == 4);
}

TEST_CASE("NCCLSHIM_TRACE_START is read or refused with what it accepts", "[window]") {
  CHECK(parseWindowStart("iter:1000")->at == 1000);
  CHECK(parseWindowStart("call:5")->start == WindowStart::kCall);
  CHECK(parseWindowStart("time:2.5")->afterSeconds == 2.5);
  CHECK(parseWindowStart("signal")->start == WindowStart::kSignal);
  CHECK(parseWindowStart("file:/tmp/go")->path == "/tmp/go");
  for (const char* bad : {"iter:", "iter:x", "iter:-1", "time:-3", "sometime", "later:5", "iter:12abc"}) {
    Result<WindowSpec> r = parseWindowStart(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("NCCLSHIM_TRACE_START") != std::string::npos);
    CHECK(r.status().message().find("iter:N") != std::string::npos);
  }
}

// Feeds `steps` steps of `step` to `window`; the recorded calls' indices.
std::vector<size_t> recorded(CaptureWindow& window, const std::string& calls, int64_t nsPerCall = 0) {
  std::vector<size_t> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (window.onCall(static_cast<uint64_t>(calls[i]), true, static_cast<int64_t>(i) * nsPerCall)) out.push_back(i);
  }
  return out;
}

TEST_CASE("a window of iterations found in the calls", "[window]") {
  WindowSpec spec;
  spec.start = WindowStart::kIteration;
  spec.at = 20;
  spec.iterations = 3;
  CaptureWindow window(spec);
  const std::string step = "abcde";  // 5 calls, no warm-up: iteration k starts at call 5k
  const std::vector<size_t> calls = recorded(window, repeat(step, 30));
  REQUIRE(calls.size() == 15);  // exactly 3 iterations
  CHECK(calls.front() == 100);
  CHECK(calls.back() == 114);
  CHECK_FALSE(window.open());
  CHECK(window.windowsOpened() == 1);

  // An iteration that went by before the period was locked (at 64 calls): the next one opens it.
  spec.at = 12;
  CaptureWindow late(spec);
  CHECK(recorded(late, repeat(step, 30)).front() == 65);
}

TEST_CASE("marks win: a window of marked iterations", "[window]") {
  WindowSpec spec;
  spec.start = WindowStart::kIteration;
  spec.at = 10;
  spec.iterations = 3;
  CaptureWindow window(spec);
  std::vector<uint64_t> markedLines;
  int recordedCalls = 0;
  for (int step = 0; step < 20; ++step) {
    // Steps of varying calls (the detector could not find them): marks decide.
    for (int c = 0; c < 3 + step % 2; ++c)
      recordedCalls += window.onCall(static_cast<uint64_t>(step * 10 + c), true, 0);
    uint64_t iteration = 0;
    if (window.onMark(0, &iteration)) markedLines.push_back(iteration);
  }
  // Steps 10, 11, 12 recorded (loop index = iteration): 3 + 4 + 3 calls; marks 10..13.
  CHECK(recordedCalls == 10);
  CHECK(markedLines == std::vector<uint64_t>{10, 11, 12, 13});
  CHECK_FALSE(window.open());
}

TEST_CASE("call:N, the operator's start and stop, and a time limit", "[window]") {
  WindowSpec byCall;
  byCall.start = WindowStart::kCall;
  byCall.at = 7;
  byCall.seconds = 1e-6;  // 1000 ns
  CaptureWindow calls(byCall);
  // 100 ns per call: opens after 7 calls, closes once 1000 ns have passed since it opened.
  const std::vector<size_t> got = recorded(calls, std::string(40, 'a') + "bcdefghijklmnopqrstuvwxyz", 100);
  REQUIRE(!got.empty());
  CHECK(got.front() == 7);
  CHECK(got.size() == 10);

  WindowSpec bySignal;
  bySignal.start = WindowStart::kSignal;
  CaptureWindow signal(bySignal);
  CHECK(recorded(signal, "abcdefgh").empty());  // nothing before the request
  signal.requestToggle();                       // no iterations known: opens at the next call
  CHECK(recorded(signal, "ijk").size() == 3);
  signal.requestToggle();
  CHECK(recorded(signal, "lmn").empty());
  CHECK(signal.windowsOpened() == 1);
  // With marks, the request waits for the next mark.
  uint64_t iteration = 0;
  CHECK_FALSE(signal.onMark(0, &iteration));
  signal.requestToggle();
  CHECK(recorded(signal, "opq").empty());
  CHECK(signal.onMark(0, &iteration));
  CHECK(iteration == 2);
  CHECK(recorded(signal, "rst").size() == 3);
}

TEST_CASE("step lines are read back (FORMAT.md version 3)", "[window]") {
  const std::string text =
      "{\"type\":\"header\",\"format\":\"ncclshim-trace\",\"version\":3,\"host\":\"h\",\"pid\":1}\n"
      "{\"type\":\"step\",\"n\":0,\"step\":10,\"t_ns\":5}\n"
      "{\"type\":\"footer\",\"records\":1,\"dropped\":0,\"steps\":1,\"cut\":\"max_mb\",\"max_bytes\":1048576}\n";
  Result<TraceFile> file = parseTrace(text, "t.jsonl");
  REQUIRE(file.ok());
  REQUIRE(file->steps.size() == 1);
  CHECK(file->steps[0].step == 10);
  CHECK(file->steps[0].timestampNs == 5);
  CHECK(file->footer.steps == 1);
  CHECK(std::string(file->footer.cut) == "max_mb");
  CHECK(file->footer.maxBytes == 1048576);
  Result<TraceFile> bad = parseTrace(
      "{\"type\":\"header\",\"format\":\"ncclshim-trace\",\"version\":3,\"host\":\"h\",\"pid\":1}\n"
      "{\"type\":\"step\",\"n\":0,\"step\":-1,\"t_ns\":5}\n",
      "bad.jsonl");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("bad.jsonl:2") != std::string::npos);
  CHECK(bad.status().message().find("step") != std::string::npos);
}

}  // namespace
}  // namespace nshim::trace
