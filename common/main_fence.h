// The fence around a program's main: whatever escapes the body (std::bad_alloc, any other
// std::exception, anything else thrown, or std::terminate from an exception on another thread or
// through a noexcept function) ends the program with ONE line on stderr and exit status
// kFenceExitStatus, never an abort and a core dump:
//
//   int main(int argc, char** argv) {
//     return nshim::runFenced("ncclshim summary", [&] { return summaryMain(argc, argv); });
//   }
//
//   ncclshim summary: internal error while reading run.json: basic_string::_M_create
//   ncclshim summary: out of memory while reading run.json
//
// "while ..." is the last setFenceActivity() of the run, if any (a body names each step worth
// naming; optional).
//
// Header-only and standard-library-only on purpose: the test programs that use it are built without
// the engine library, fmt or -I. (they include it by a relative path).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <utility>

namespace nshim {

// EX_SOFTWARE (sysexits.h): distinct from 1 ("different" for diff, "failed" for most tools) and
// 2 (usage).
inline constexpr int kFenceExitStatus = 70;

namespace fence_detail {

struct State {
  std::mutex mutex;
  std::string program = "program";
  std::string activity;
  std::FILE* out = nullptr;  // null: stderr
};
inline State& state() {
  static State s;
  return s;
}

// "<program>: internal error[ while <activity>]: <what>" or "<program>: out of memory[ while ...]".
inline std::string describe(std::exception_ptr e) {
  State& s = state();
  std::string program, activity;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    program = s.program;
    activity = s.activity;
  }
  std::string what;
  bool oom = false;
  try {
    if (e) std::rethrow_exception(std::move(e));
    what = "std::terminate called without an exception";
  } catch (const std::bad_alloc&) { oom = true; } catch (const std::exception& ex) {
    what = ex.what();
    if (what.empty()) what = "std::exception";
  } catch (...) { what = "unknown exception"; }
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  std::string line = program + (oom ? ": out of memory" : ": internal error");
  if (!activity.empty()) line += " while " + activity;
  if (!oom) line += ": " + what;
  return line + '\n';
}

// Writes describe(e); if even that runs out of memory, a line built without allocating.
inline void report(std::exception_ptr e) {
  std::FILE* out = state().out ? state().out : stderr;
  try {
    std::fputs(describe(std::move(e)).c_str(), out);
  } catch (...) {
    std::fputs(state().program.c_str(), out);
    std::fputs(": out of memory\n", out);
  }
  std::fflush(out);
}

[[noreturn]] inline void onTerminate() {
  report(std::current_exception());
  std::_Exit(kFenceExitStatus);
}

}  // namespace fence_detail

// Names what the program is doing now ("reading run.json"), for the fence's message; empty clears.
inline void setFenceActivity(std::string what) {
  fence_detail::State& s = fence_detail::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.activity = std::move(what);
}

// Runs body() and returns its result; on an exception writes one line naming `program` (and the
// activity, if any) to `out` (stderr when null) and returns kFenceExitStatus. It also installs a
// terminate handler that writes the same line and exits with that status, for exceptions no catch
// can reach (other threads, noexcept functions).
inline int runFenced(const char* program, const std::function<int()>& body, std::FILE* out = nullptr) {
  fence_detail::State& s = fence_detail::state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.program = program;
    s.activity.clear();
    s.out = out;
  }
  std::set_terminate(fence_detail::onTerminate);
  try {
    return body();
  } catch (...) {
    fence_detail::report(std::current_exception());
    return kFenceExitStatus;
  }
}

}  // namespace nshim
