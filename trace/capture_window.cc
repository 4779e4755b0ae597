// The recording window's decisions (capture_window.h).
#include "trace/capture_window.h"

#include <charconv>
#include <cmath>

namespace nshim::trace {
namespace {

constexpr const char* kAccepted = "iter:N, call:N, time:SECONDS, signal or file:PATH";

Status badStart(std::string_view text, std::string_view why) {
  return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_TRACE_START={}: {} (expected {})", text, why, kAccepted);
}

}  // namespace

Result<WindowSpec> parseWindowStart(std::string_view text) {
  WindowSpec spec;
  if (text == "signal") {
    spec.start = WindowStart::kSignal;
    return spec;
  }
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return badStart(text, "no kind");
  const std::string_view kind = text.substr(0, colon), value = text.substr(colon + 1);
  if (value.empty()) return badStart(text, "nothing after ':'");
  if (kind == "file") {
    spec.start = WindowStart::kFile;
    spec.path = std::string(value);
    return spec;
  }
  if (kind == "iter" || kind == "call") {
    spec.start = kind == "iter" ? WindowStart::kIteration : WindowStart::kCall;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), spec.at);
    if (error != std::errc() || end != value.data() + value.size()) return badStart(text, "not a whole number");
    return spec;
  }
  if (kind == "time") {
    spec.start = WindowStart::kTime;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), spec.afterSeconds);
    if (error != std::errc() || end != value.data() + value.size() || !std::isfinite(spec.afterSeconds) ||
        spec.afterSeconds < 0) {
      return badStart(text, "not a number of seconds >= 0");
    }
    return spec;
  }
  return badStart(text, "unknown kind");
}

bool CaptureWindow::wantsOpen(bool boundary) {
  switch (spec_.start) {
    case WindowStart::kIteration: return !marked_ && windows_ == 0 && boundary && iteration_ >= spec_.at;
    case WindowStart::kCall: return windows_ == 0 && calls_ > spec_.at;
    default:
      // The operator's request: at the next boundary when iterations are known (marks open it at a
      // mark), else at once.
      if (!startRequested_.load(std::memory_order_relaxed)) return false;
      if (spec_.start == WindowStart::kTime && windows_ > 0) return false;
      return !iterationsKnown() || (!marked_ && boundary);
  }
}

bool CaptureWindow::wantsClose(bool boundary, int64_t nowNs) {
  if (spec_.seconds > 0 && static_cast<double>(nowNs - openNs_) >= spec_.seconds * 1e9) return true;
  if (stopRequested_.load(std::memory_order_relaxed) && (!iterationsKnown() || (!marked_ && boundary))) return true;
  return spec_.iterations > 0 && !marked_ && boundary && iteration_ >= openIteration_ + spec_.iterations;
}

void CaptureWindow::openNow(int64_t nowNs, bool atBoundary) {
  startRequested_.store(false, std::memory_order_relaxed);
  stopRequested_.store(false, std::memory_order_relaxed);
  open_.store(true, std::memory_order_relaxed);
  openNs_ = nowNs;
  openIteration_ = atBoundary ? iteration_ : iteration_ + 1;
  ++windows_;
  change_ = {true, false, iteration_, calls_};
}

void CaptureWindow::closeNow() {
  stopRequested_.store(false, std::memory_order_relaxed);
  open_.store(false, std::memory_order_relaxed);
  change_ = {false, true, iteration_, calls_};
}

bool CaptureWindow::onCall(uint64_t signature, bool isCall, int64_t nowNs) {
  lock();
  change_ = {};
  bool boundary = false;
  if (!marked_) {
    boundary = detector_.feed(signature);
    if (detector_.locked()) iteration_ = detector_.iteration();
  }
  if (isCall) ++calls_;
  bool record;
  if (!open_.load(std::memory_order_relaxed)) {
    record = wantsOpen(boundary);
    if (record) openNow(nowNs, boundary || !iterationsKnown());
  } else {
    record = !wantsClose(boundary, nowNs);
    if (!record) closeNow();
  }
  unlock();
  return record;
}

bool CaptureWindow::onMark(int64_t nowNs, uint64_t* iteration) {
  lock();
  change_ = {};
  marked_ = true;
  iteration_ = ++marks_;
  *iteration = iteration_;
  bool record;
  if (!open_.load(std::memory_order_relaxed)) {
    const bool requested =
        startRequested_.load(std::memory_order_relaxed) && !(spec_.start == WindowStart::kTime && windows_ > 0);
    record = (spec_.start == WindowStart::kIteration && windows_ == 0 && iteration_ >= spec_.at) ||
             (spec_.start != WindowStart::kIteration && spec_.start != WindowStart::kCall && requested);
    if (record) openNow(nowNs, true);
  } else {
    record = true;  // the mark that ends the window's last iteration is its last line
    const bool close = (spec_.seconds > 0 && static_cast<double>(nowNs - openNs_) >= spec_.seconds * 1e9) ||
                       stopRequested_.load(std::memory_order_relaxed) ||
                       (spec_.iterations > 0 && iteration_ >= openIteration_ + spec_.iterations);
    if (close) closeNow();
  }
  unlock();
  return record;
}

}  // namespace nshim::trace
