// common/main_fence.h: an exception out of a program's body (bad_alloc, std::exception, a thrown
// int) becomes exactly one line naming the program and its current activity, and status 70; an
// exception on another thread (std::terminate) does the same in a child process instead of an abort.
#include "common/main_fence.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/catch.h"

namespace nshim {
namespace {

// Everything written to `file` so far.
std::string readAll(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[256];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  return text;
}

// Runs `body` fenced as "tool", restoring the terminate handler afterwards; returns status and text.
std::pair<int, std::string> fenced(const std::function<int()>& body) {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  std::terminate_handler previous = std::get_terminate();
  int status = runFenced("tool", body, out);
  std::set_terminate(previous);
  std::string text = readAll(out);
  std::fclose(out);
  return {status, text};
}

TEST_CASE("fence: a body that returns passes its status through and writes nothing", "[fence]") {
  auto [status, text] = fenced([] { return 3; });
  CHECK(status == 3);
  CHECK(text.empty());
}

TEST_CASE("fence: bad_alloc is one 'out of memory' line naming the activity", "[fence]") {
  auto [status, text] = fenced([]() -> int {
    setFenceActivity("reading big.json");
    throw std::bad_alloc();
  });
  CHECK(status == kFenceExitStatus);
  CHECK(text == "tool: out of memory while reading big.json\n");
}

TEST_CASE("fence: a std::exception is one line with its what(), newlines folded", "[fence]") {
  auto [status, text] = fenced([]() -> int { throw std::runtime_error("bad\nthing"); });
  CHECK(status == kFenceExitStatus);
  CHECK(text == "tool: internal error: bad thing\n");
}

TEST_CASE("fence: a thrown non-exception is an 'unknown exception' line", "[fence]") {
  auto [status, text] = fenced([]() -> int {
    setFenceActivity("step 2");
    throw 42;
  });
  CHECK(status == kFenceExitStatus);
  CHECK(text == "tool: internal error while step 2: unknown exception\n");
}

TEST_CASE("fence: each run starts with no activity", "[fence]") {
  fenced([]() -> int {
    setFenceActivity("old");
    return 0;
  });
  auto [status, text] = fenced([]() -> int { throw std::logic_error("x"); });
  CHECK(text == "tool: internal error: x\n");
}

TEST_CASE("fence: an exception on another thread exits 70 with one line, no abort", "[fence]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    runFenced(
        "tool",
        [] {
          setFenceActivity("running workers");
          std::thread worker([] { throw std::out_of_range("index 9"); });
          worker.join();
          return 0;
        },
        out);
    ::_exit(0);
  }
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  std::string text = readAll(out);
  std::fclose(out);
  REQUIRE(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == kFenceExitStatus);
  CHECK(text == "tool: internal error while running workers: index 9\n");
}

}  // namespace
}  // namespace nshim
