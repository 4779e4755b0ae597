// Runs several jobs at once, each on its own thread, for a group whose operations span several
// communicators (one thread may drive every rank of an ncclCommInitAll, so the communicators' work
// must progress concurrently). Worker threads are pooled and reused across groups.
#pragma once

#include <functional>
#include <vector>

namespace nshim {

// Runs jobs[0] on the calling thread and every other job on a pooled thread of its own; returns
// when all have finished. Jobs must not throw.
void runConcurrently(const std::vector<std::function<void()>>& jobs);

}  // namespace nshim
