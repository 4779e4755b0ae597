// Helpers for tests that run several ranks: as threads (in-process transport) or as forked
// processes (TCP, shim), with a deadline so a broken test fails instead of hanging.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nshim::testing {

// Runs fn(rank) on `nranks` threads and joins them. Returns one message per rank ("" = success).
std::vector<std::string> runRanksInThreads(int nranks, const std::function<std::string(int rank)>& fn);

// Forks `nranks` children running fn(rank); a child exits 0 when fn returns "" and 1 otherwise
// (printing the message to stderr). Children still running after `timeoutSeconds` are killed.
// Returns the exit code per rank (128 + signal when killed by a signal, -1 on timeout).
std::vector<int> runRanksInProcesses(int nranks, const std::function<std::string(int rank)>& fn, double timeoutSeconds);

// Whether AddressSanitizer's runtime is in the process. Asked at run time: the sanitizer suite links
// test objects compiled without it against its ASan engine, so __SANITIZE_ADDRESS__ cannot tell.
bool runningUnderAddressSanitizer();

// Deterministic test pattern: small integers exactly representable in every NCCL type.
double patternValue(int rank, size_t index, int salt);

}  // namespace nshim::testing
