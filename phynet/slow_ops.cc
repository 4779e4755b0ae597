// Ops far slower than their class's median (slow_ops.h).
#include "phynet/slow_ops.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "phynet/report.h"
#include "workload/size_bucket.h"

namespace nshim::phynet {
namespace {

// The global ranks of a row: the pair of a send/recv ("3->1"), else its communicator's members.
std::vector<int> rowRanks(const OpRow& row, const Workload& workload) {
  if (!row.ranks.empty()) {
    const size_t arrow = row.ranks.find("->");
    if (arrow != std::string::npos) {
      try {
        return {std::stoi(row.ranks.substr(0, arrow)), std::stoi(row.ranks.substr(arrow + 2))};
      } catch (const std::exception&) { return {}; }
    }
  }
  const CommGroup* comm = workload.findComm(row.commId);
  return comm ? comm->members : std::vector<int>{};
}

std::string hostsOf(const std::vector<int>& ranks, const std::vector<std::string>& labels) {
  std::vector<std::string> hosts;
  for (int g : ranks) {
    if (g < 0 || g >= static_cast<int>(labels.size())) continue;
    if (std::find(hosts.begin(), hosts.end(), labels[g]) == hosts.end()) hosts.push_back(labels[g]);
  }
  std::string out;
  for (size_t i = 0; i < hosts.size() && i < 8; ++i) out += (i ? " - " : "") + hosts[i];
  if (hosts.size() > 8) out += fmt::format(" - ... ({} hosts)", hosts.size());
  return out;
}

}  // namespace

std::vector<SlowOp> findSlowOps(const std::vector<OpRow>& rows, const Workload& workload,
                                const std::vector<RankEndpoint>& endpoints) {
  std::map<std::tuple<std::string, std::string, uint64_t>, std::vector<size_t>> classes;
  for (size_t i = 0; i < rows.size(); ++i) {
    classes[{rows[i].op, rows[i].label, sizeBucket(rows[i].bytes)}].push_back(i);
  }
  const std::vector<std::string> labels = endpoints.empty() ? std::vector<std::string>{} : hostLabels(endpoints);
  std::vector<SlowOp> slow;
  for (const auto& [key, members] : classes) {
    if (members.size() < 3) continue;
    std::vector<double> times;
    for (size_t i : members) times.push_back(rows[i].timeUs);
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    const double median = times[times.size() / 2];
    for (size_t i : members) {
      const double t = rows[i].timeUs;
      if (t > kSlowFactor * median && t - median >= kSlowMarginUs) {
        slow.push_back({i, median, median > 0 ? t / median : 0, hostsOf(rowRanks(rows[i], workload), labels)});
      }
    }
  }
  std::sort(slow.begin(), slow.end(), [&rows](const SlowOp& a, const SlowOp& b) {
    return rows[a.row].timeUs - a.medianUs > rows[b.row].timeUs - b.medianUs;
  });
  return slow;
}

}  // namespace nshim::phynet
