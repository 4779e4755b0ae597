// CPU binding of the ranks that `ncclshim perf -np N` forks, as mpirun binds by default: each rank
// on a CPU of its own when the ranks fit on the CPUs this process may use, no binding when they
// would share (oversubscribed). Unbound ranks that fit can still be put on one CPU by the scheduler
// for a while, which halves their speed in bursts (seen on the 2-core development VM).
#pragma once

#include <string>
#include <vector>

namespace nshim::perf {

enum class RankBinding { kAuto, kCore, kNone };

// Parses "auto", "core" or "none"; false for anything else.
bool parseRankBinding(const std::string& text, RankBinding* binding);

// The CPU for each of `nranks` ranks (index = rank), or an empty list for no binding. kAuto binds
// when nranks <= the CPUs allowed; kCore binds always, rank r on allowed CPU r mod count.
std::vector<int> cpusForRanks(int nranks, RankBinding binding);

// Binds the calling process to `cpu`; returns "" or an error.
std::string bindToCpu(int cpu);

}  // namespace nshim::perf
