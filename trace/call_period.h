// The shortest period of a sequence of call signatures, read from its end backwards: a training
// step repeats the same calls, the first calls may differ (set-up, a first step with extra calls).
// The periodic tail is the longest run at the end with a period; among equally long tails the
// shortest period wins. A period counts when it repeats at least twice and the tail holds at least
// half of the calls. Linear in the number of calls (Z-function of the reversed sequence). Used
// offline on a recorded trace (workload/iteration_period.h) and online while recording
// (trace/online_iterations.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nshim::trace {

struct CallPeriod {
  bool found = false;
  size_t period = 0;      // calls per iteration
  size_t tailStart = 0;   // index of the first call of the periodic tail
  size_t iterations = 0;  // whole periods in the tail, counted back from the last call
};

CallPeriod findCallPeriod(const uint64_t* signatures, size_t count);

}  // namespace nshim::trace
