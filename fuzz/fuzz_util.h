// Shared by the libFuzzer targets: quiet logging (every target sets NCCLSHIM_DEBUG=NONE before the
// first log call, so rejected inputs cost no stderr), and a check that aborts (a crash libFuzzer
// reports with the input) when a property of a successful parse does not hold.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace nshim::fuzz {

inline void quietLogs() { setenv("NCCLSHIM_DEBUG", "NONE", 1); }

}  // namespace nshim::fuzz
