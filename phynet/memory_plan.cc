// Memory planning of a replay and the check against the hosts' available memory (memory_plan.h).
#include "phynet/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "common/rank_ranges.h"
#include "phynet/op_runner.h"
#include "phynet/replay.h"
#include "phynet/workload_transform.h"

namespace nshim::phynet {
namespace {

// A number from a one-line file (cgroup limits); 0 when absent or "max".
uint64_t readNumberFile(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return 0;
  try {
    return std::stoull(word);
  } catch (...) {
    return 0;
  }
}

uint64_t memAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// The cgroup's headroom (limit minus usage), 0 without a limit.
uint64_t cgroupHeadroomBytes() {
  uint64_t limit = readNumberFile("/sys/fs/cgroup/memory.max");
  uint64_t used = readNumberFile("/sys/fs/cgroup/memory.current");
  if (limit == 0) {
    limit = readNumberFile("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    used = readNumberFile("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    if (limit >= (uint64_t{1} << 60)) limit = 0;  // v1 reports "no limit" as a huge number
  }
  if (limit == 0) return 0;
  return limit > used ? limit - used : 1;
}

}  // namespace

RankMemoryPlan planRankMemory(const Workload& workload, int globalRank, bool verify, uint64_t capBytes) {
  RankMemoryPlan plan;
  const std::vector<WorkOp>& ops = workload.ranks.at(globalRank).ops;
  for (const std::vector<uint32_t>& batch : issueBatches(ops)) {
    const uint64_t id = ops[batch.front()].commId;
    const CommGroup* group = workload.findComm(id);
    const int nranks = group ? static_cast<int>(group->members.size()) : 1;
    std::vector<const WorkOp*> list;
    for (uint32_t k : batch) {
      list.push_back(&ops[k]);
      BufferNeed one = collectiveBufferNeed(ops[k], nranks);
      if (one.sendBytes + one.recvBytes > plan.largestBytes) {
        plan.largestBytes = one.sendBytes + one.recvBytes;
        plan.largest = &ops[k];
      }
    }
    BufferNeed need = batchBufferNeed(list, nranks, verify, verify ? kNoCap : capBytes);
    BufferNeed& max = plan.arenas[id];
    max.sendBytes = std::max(max.sendBytes, need.sendBytes);
    max.recvBytes = std::max(max.recvBytes, need.recvBytes);
  }
  for (const auto& [id, need] : plan.arenas) plan.totalBytes += need.sendBytes + need.recvBytes;
  return plan;
}

uint64_t availableMemoryBytes() {
  uint64_t available = memAvailableBytes();
  uint64_t headroom = cgroupHeadroomBytes();
  if (headroom != 0 && (available == 0 || headroom < available)) available = headroom;
  return available;
}

std::string memoryText(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string checkReplayMemory(const MemoryCheckInput& input) {
  const Workload& w = *input.workload;
  std::map<std::string, std::vector<int>> ranksOf;
  for (int g = 0; g < w.worldSize; ++g) ranksOf[input.hosts.at(g)].push_back(g);
  for (const auto& [host, ranks] : ranksOf) {
    uint64_t need = 0, available = UINT64_MAX;
    RankMemoryPlan worst;
    int worstRank = ranks.front();
    for (int g : ranks) {
      RankMemoryPlan plan = planRankMemory(w, g, input.verify, input.capBytes);
      need += plan.totalBytes;
      if (input.available.at(g) != 0) available = std::min(available, input.available[g]);
      if (plan.largestBytes > worst.largestBytes) worst = plan, worstRank = g;
    }
    if (available == UINT64_MAX || need <= available) continue;
    const double fit = static_cast<double>(available) / static_cast<double>(need);
    std::string remedy;
    if (input.verify) {
      // Buffers grow with the message sizes: two significant digits, rounded down.
      double scale = input.scale * fit;
      double step = std::pow(10.0, std::floor(std::log10(scale)) - 1);
      remedy = fmt::format("--scale {:g} would fit (or leave out --verify: replays then keep each buffer within "
                           "--max-buffer)", std::floor(scale / step) * step);
    } else {
      uint64_t cap = static_cast<uint64_t>(static_cast<double>(input.capBytes) * fit) & ~uint64_t{(1 << 20) - 1};
      remedy = cap >= (1 << 20) ? fmt::format("--max-buffer {}M would fit", cap >> 20)
                                : std::string("even 1 MiB buffers would not fit: run fewer ranks on this host");
    }
    std::string largest = worst.largest == nullptr
                              ? std::string()
                              : fmt::format("; its largest operation is {} at {} (rank {}, {} of buffers{})",
                                            describeOp(*worst.largest), worst.largest->source, worstRank,
                                            memoryText(worst.largestBytes), input.verify ? " with --verify" : "");
    return fmt::format("host {} ({}) needs {} of buffers{} but has {} available (MemAvailable / cgroup limit){}; {}",
                       host, fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", rankRangesText(ranks)), memoryText(need),
                       input.verify ? "" : fmt::format(" (each within --max-buffer {})", memoryText(input.capBytes)),
                       memoryText(available), largest, remedy);
  }
  return "";
}

}  // namespace nshim::phynet
