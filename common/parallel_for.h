// parallelFor: runs body(0..n-1) on up to one thread per core (this thread included), each index
// once, for independent pieces of work such as reading or converting one trace file per rank. If
// threads cannot be started, the ones that did (or this thread alone) do all the work. The body
// must not throw (an exception on a helper thread would end the program through the main fence).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace nshim {

template <typename Body>
void parallelFor(size_t n, Body&& body, size_t maxThreads = 16) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min({cores, n, std::max<size_t>(maxThreads, 1)});
  std::vector<std::thread> helpers;
  try {
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // fewer helpers than asked: those started and this thread share the work
  }
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace nshim
