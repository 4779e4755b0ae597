// CPU binding of `ncclshim perf`'s local ranks (see rank_binding.h).
#include "tools/perf/rank_binding.h"

#include <errno.h>
#include <sched.h>

#include <cstring>

namespace nshim::perf {

bool parseRankBinding(const std::string& text, RankBinding* binding) {
  if (text == "auto") *binding = RankBinding::kAuto;
  else if (text == "core") *binding = RankBinding::kCore;
  else if (text == "none") *binding = RankBinding::kNone;
  else return false;
  return true;
}

std::vector<int> cpusForRanks(int nranks, RankBinding binding) {
  if (binding == RankBinding::kNone || nranks < 1) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.empty() || (binding == RankBinding::kAuto && nranks > static_cast<int>(cpus.size()))) return {};
  std::vector<int> perRank(nranks);
  for (int rank = 0; rank < nranks; ++rank) perRank[rank] = cpus[rank % cpus.size()];
  return perRank;
}

std::string bindToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return "cannot bind to CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
  }
  return "";
}

}  // namespace nshim::perf
