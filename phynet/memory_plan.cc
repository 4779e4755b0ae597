// Memory planning of a replay and the check against the hosts' available memory (memory_plan.h).
#include "phynet/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "collectives/collectives.h"
#include "common/rank_ranges.h"
#include "phynet/op_runner.h"
#include "phynet/rank_messages.h"
#include "phynet/replay.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

// A number from a one-line file (cgroup limits); 0 when absent or "max".
uint64_t readNumberFile(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return 0;
  try {
    return std::stoull(word);
  } catch (...) { return 0; }
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

bool reduces(const WorkOp& op) { return describe(op.kind).reduces; }

RankMemoryPlan planRankMemory(const Workload& workload, int globalRank, bool verify, uint64_t capBytes,
                              const CollectiveOptions& collectives) {
  RankMemoryPlan plan;
  const std::vector<WorkOp>& ops = workload.ranks.at(globalRank).ops;
  for (const std::vector<uint32_t>& batch : issueBatches(ops)) {
    const uint64_t id = ops[batch.front()].commId;
    const CommGroup* group = workload.findComm(id);
    const int nranks = group ? static_cast<int>(group->members.size()) : 1;
    std::vector<const WorkOp*> list;
    for (uint32_t k : batch) {
      list.push_back(&ops[k]);
      if (reduces(ops[k])) {  // the engine stages the op's pieces (the whole op with --verify)
        const PieceSplit split = splitToCap(ops[k], nranks, verify ? kNoCap : capBytes);
        const uint64_t count = split.pieces > 1 ? std::min(ops[k].count, split.perPiece) : ops[k].count;
        const uint64_t stages = reductionScratchFor(collectives, count * dataTypeSize(ops[k].type));
        uint64_t& scratch = plan.scratch[id];
        scratch = std::max({scratch, stages, kMinScratchBytes});
      }
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
  for (const auto& [id, bytes] : plan.scratch) plan.totalBytes += bytes;
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

std::vector<uint64_t> candidateCaps(uint64_t givenCap) {
  std::vector<uint64_t> caps;
  for (uint64_t cap = uint64_t{256} << 20; cap >= (uint64_t{4} << 20); cap = cap % 3 == 0 ? cap / 3 * 2 : cap / 4 * 3) {
    caps.push_back(cap);
  }
  if (std::find(caps.begin(), caps.end(), givenCap) == caps.end()) caps.push_back(givenCap);
  return caps;
}

RankMemoryFacts rankMemoryFacts(const Workload& workload, int globalRank, bool verify,
                                const std::vector<uint64_t>& caps, const CollectiveOptions& collectives) {
  RankMemoryFacts facts;
  if (globalRank < 0 || globalRank >= static_cast<int>(workload.ranks.size())) {
    facts.totalAtCap.assign(caps.size(), 0);
    return facts;
  }
  for (uint64_t cap : caps) {
    if (verify && !facts.totalAtCap.empty()) {  // --verify needs whole buffers: the cap changes nothing
      facts.totalAtCap.push_back(facts.totalAtCap.front());
      continue;
    }
    RankMemoryPlan plan = planRankMemory(workload, globalRank, verify, cap, collectives);
    facts.totalAtCap.push_back(plan.totalBytes);
    if (plan.largest && facts.largest.empty()) {
      facts.largestBytes = plan.largestBytes;
      facts.largest = fmt::format("{} at {}", describeOp(*plan.largest), plan.largest->source);
    }
  }
  return facts;
}

std::vector<int64_t> packMemoryFacts(const RankMemoryFacts& facts) {
  std::vector<int64_t> words{static_cast<int64_t>(facts.largestBytes)};
  for (uint64_t total : facts.totalAtCap) words.push_back(static_cast<int64_t>(total));
  std::vector<int64_t> text = packLines({facts.largest});
  words.insert(words.end(), text.begin(), text.end());
  return words;
}

bool unpackMemoryFacts(const std::vector<int64_t>& words, size_t caps, RankMemoryFacts* out) {
  if (words.size() < 1 + caps + 1) return false;
  out->largestBytes = static_cast<uint64_t>(words[0]);
  out->totalAtCap.assign(words.begin() + 1, words.begin() + 1 + static_cast<std::ptrdiff_t>(caps));
  std::vector<std::string> lines =
      unpackLines(std::vector<int64_t>(words.begin() + 1 + static_cast<std::ptrdiff_t>(caps), words.end()));
  out->largest = lines.empty() ? "" : lines.front();
  return true;
}

namespace {

std::map<std::string, std::vector<int>> ranksByHost(const MemoryCheckInput& input) {
  std::map<std::string, std::vector<int>> ranksOf;
  for (size_t g = 0; g < input.ranks.size(); ++g) ranksOf[input.hosts.at(g)].push_back(static_cast<int>(g));
  return ranksOf;
}

// The least memory any of `ranks` says is available (they share a host); UINT64_MAX when unknown.
uint64_t hostAvailable(const MemoryCheckInput& input, const std::vector<int>& ranks) {
  uint64_t available = UINT64_MAX;
  for (int g : ranks) {
    if (input.available.at(g) != 0) available = std::min(available, input.available[g]);
  }
  return available;
}

uint64_t hostNeed(const MemoryCheckInput& input, const std::vector<int>& ranks, uint64_t cap) {
  const size_t at = static_cast<size_t>(std::find(input.caps.begin(), input.caps.end(), cap) - input.caps.begin());
  uint64_t need = 0;
  for (int g : ranks) {
    const std::vector<uint64_t>& totals = input.ranks.at(g).totalAtCap;
    need += at < totals.size() ? totals[at] : 0;
  }
  return need;
}

}  // namespace

uint64_t fittingCapBytes(const MemoryCheckInput& input, double fraction) {
  if (input.verify) return 0;
  const auto ranksOf = ranksByHost(input);
  for (uint64_t cap : input.caps) {
    if (cap > input.capBytes || cap < (uint64_t{4} << 20)) continue;
    bool fits = true;
    for (const auto& [host, ranks] : ranksOf) {
      const uint64_t available = hostAvailable(input, ranks);
      if (available != UINT64_MAX && static_cast<double>(hostNeed(input, ranks, cap)) > fraction * available) {
        fits = false;
        break;
      }
    }
    if (fits) return cap;
  }
  return 0;
}

std::string checkReplayMemory(const MemoryCheckInput& input) {
  for (const auto& [host, ranks] : ranksByHost(input)) {
    const uint64_t available = hostAvailable(input, ranks);
    const uint64_t need = hostNeed(input, ranks, input.capBytes);
    if (available == UINT64_MAX || need <= available) continue;
    int worstRank = ranks.front();
    for (int g : ranks) {
      if (input.ranks[g].largestBytes > input.ranks[worstRank].largestBytes) worstRank = g;
    }
    const RankMemoryFacts& worst = input.ranks[worstRank];
    std::string remedy;
    if (input.verify) {
      // Buffers grow with the message sizes: two significant digits, rounded down.
      double scale = input.scale * static_cast<double>(available) / static_cast<double>(need);
      double step = std::pow(10.0, std::floor(std::log10(scale)) - 1);
      remedy = fmt::format(
          "--scale {:g} would fit (or leave out --verify: replays then keep each buffer within "
          "--max-buffer)",
          std::floor(scale / step) * step);
    } else {
      const uint64_t cap = fittingCapBytes(input, kComfortableShare);
      remedy = cap != 0 ? fmt::format("--max-buffer {}M would fit", cap >> 20)
                        : std::string("even 4 MiB buffers would not fit: run fewer ranks on this host");
    }
    std::string largest =
        worst.largest.empty()
            ? std::string()
            : fmt::format("; its largest operation is {} (rank {}, {} of buffers{})", worst.largest, worstRank,
                          memoryText(worst.largestBytes), input.verify ? " with --verify" : "");
    return fmt::format("host {} ({}) needs {} of buffers{} but has {} available (MemAvailable / cgroup limit){}; {}",
                       host, fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", rankRangesText(ranks)),
                       memoryText(need),
                       input.verify ? "" : fmt::format(" (each within --max-buffer {})", memoryText(input.capBytes)),
                       memoryText(available), largest, remedy);
  }
  return "";
}

}  // namespace nshim::phynet
