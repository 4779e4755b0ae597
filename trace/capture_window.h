// The recording window (NCCLSHIM_TRACE_START, _ITERATIONS, _SECONDS; docs/capture.md): when the
// recorder starts writing a process's calls and when it stops, decided call by call and mark by
// mark. Iterations come from the job's marks (ncclshimMarkStep), which win from the first one on,
// else from the calls themselves (online_iterations.h). The operator's "now" (a signal, a trigger
// file, a time) is a request that the next iteration boundary honours, or the next call when no
// iteration is known. libshim/trace_window.cc wires it to the record hook; this part is plain
// logic, testable without NCCL.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "trace/online_iterations.h"

namespace nshim::trace {

enum class WindowStart { kIteration, kCall, kTime, kSignal, kFile };

struct WindowSpec {
  WindowStart start = WindowStart::kIteration;
  uint64_t at = 0;          // iter:N, call:N
  double afterSeconds = 0;  // time:S
  std::string path;         // file:PATH
  uint64_t iterations = 0;  // NCCLSHIM_TRACE_ITERATIONS (0: no limit)
  double seconds = 0;       // NCCLSHIM_TRACE_SECONDS (0: no limit)
};

// NCCLSHIM_TRACE_START's text: iter:N | call:N | time:SECONDS | signal | file:PATH; an error
// naming the variable and what it accepts.
Result<WindowSpec> parseWindowStart(std::string_view text);

// The window's decisions. Thread-safe (a spin lock around each decision; the job's calls rarely
// come from two threads at once); request*() are async-signal-safe.
class CaptureWindow {
 public:
  explicit CaptureWindow(WindowSpec spec) : spec_(std::move(spec)) {}

  // One collective, point-to-point or group call (`isCall`: a collective or point-to-point, which
  // call:N counts), before it runs: whether it is recorded.
  bool onCall(uint64_t signature, bool isCall, int64_t nowNs);
  // One ncclshimMarkStep(): whether its step line is recorded (the marks that open and close a
  // window are). `iteration` gets the iteration this mark starts (marks made so far).
  bool onMark(int64_t nowNs, uint64_t* iteration);
  // The operator's start and stop (signal handler, watcher thread).
  void requestStart() { startRequested_.store(true, std::memory_order_relaxed); }
  void requestStop() { stopRequested_.store(true, std::memory_order_relaxed); }
  // SIGUSR2: a start while closed, a stop while open.
  void requestToggle() {
    (open_.load(std::memory_order_relaxed) ? stopRequested_ : startRequested_).store(true, std::memory_order_relaxed);
  }

  bool open() const { return open_.load(std::memory_order_relaxed); }
  const WindowSpec& spec() const { return spec_; }
  // What the last decision did, for the log (read after onCall / onMark by the same thread).
  struct Change {
    bool opened = false;
    bool closed = false;
    uint64_t iteration = 0;  // the iteration at the change
    uint64_t calls = 0;      // calls before it
  };
  Change lastChange() const { return change_; }
  bool detectorGaveUp() const { return !marked_ && detector_.gaveUp(); }
  uint64_t windowsOpened() const { return windows_; }

 private:
  bool iterationsKnown() const { return marked_ || detector_.locked(); }
  bool wantsOpen(bool boundary);
  bool wantsClose(bool boundary, int64_t nowNs);
  void openNow(int64_t nowNs, bool atBoundary);
  void closeNow();
  void lock() {
    while (busy_.exchange(true, std::memory_order_acquire)) {}
  }
  void unlock() { busy_.store(false, std::memory_order_release); }

  WindowSpec spec_;
  std::atomic<bool> busy_{false};
  std::atomic<bool> open_{false};
  std::atomic<bool> startRequested_{false};
  std::atomic<bool> stopRequested_{false};
  OnlineIterations detector_;
  bool marked_ = false;  // the job marks its steps: iterations from marks only
  uint64_t marks_ = 0;
  uint64_t calls_ = 0;          // collectives and point-to-point calls so far
  uint64_t iteration_ = 0;      // the iteration now running (from 0)
  uint64_t openIteration_ = 0;  // the first whole iteration of the open window
  int64_t openNs_ = 0;
  uint64_t windows_ = 0;  // windows opened so far
  Change change_;
};

}  // namespace nshim::trace
