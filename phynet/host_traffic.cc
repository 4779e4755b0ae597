// Aggregation of per-peer counters by host and NIC (host_traffic.h).
#include "phynet/host_traffic.h"

#include <algorithm>
#include <map>
#include <utility>

namespace nshim::phynet {

HostTraffic buildHostTraffic(const std::vector<RankEndpoint>& endpoints, const std::vector<RankCounters>& counters) {
  HostTraffic out;
  const int world = static_cast<int>(endpoints.size());
  out.hostOfRank = hostLabels(endpoints);
  std::map<std::pair<std::string, std::string>, size_t> nicIndex;  // (host id, nic) -> index in out.nics
  std::map<std::string, int> hostIndex;                            // host id -> order of first rank
  std::vector<size_t> nicOfRank(world);
  for (int r = 0; r < world; ++r) {
    const RankEndpoint& e = endpoints[r];
    if (!hostIndex.count(e.hostId)) hostIndex[e.hostId] = static_cast<int>(hostIndex.size());
    auto key = std::make_pair(e.hostId, e.nic);
    auto [it, fresh] = nicIndex.emplace(key, out.nics.size());
    if (fresh) out.nics.push_back(NicTraffic{out.hostOfRank[r], e.nic, {}, {}, {}});
    out.nics[it->second].ranks.push_back(r);
    nicOfRank[r] = it->second;
  }
  out.hosts = static_cast<int>(hostIndex.size());
  // Keep the NICs grouped by host (first rank's order), NICs of a host in order of their first rank.
  std::vector<size_t> order(out.nics.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto hostRank = [&](size_t nic) { return hostIndex[endpoints[out.nics[nic].ranks.front()].hostId]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return hostRank(a) < hostRank(b); });

  std::map<std::pair<int, int>, Traffic> pairs;  // (host order, host order)
  for (int from = 0; from < world && from < static_cast<int>(counters.size()); ++from) {
    const std::vector<PeerTraffic>& peers = counters[from].peers;
    const int fromHost = hostIndex[endpoints[from].hostId];
    for (int to = 0; to < world && to < static_cast<int>(peers.size()); ++to) {
      const PeerTraffic& t = peers[to];
      if (t.sent == 0 && t.wire == 0 && t.messages == 0 && t.model == 0) continue;
      const int toHost = hostIndex[endpoints[to].hostId];
      pairs[{fromHost, toHost}].add(t);
      if (fromHost == toHost) continue;
      out.nics[nicOfRank[from]].sent.add(t);
      out.nics[nicOfRank[to]].received.add(t);
    }
  }
  std::vector<std::string> labelOfHost(out.hosts);
  for (int r = 0; r < world; ++r) labelOfHost[hostIndex[endpoints[r].hostId]] = out.hostOfRank[r];
  for (const auto& [key, traffic] : pairs) {
    out.pairs.push_back(HostPairTraffic{labelOfHost[key.first], labelOfHost[key.second], traffic});
  }
  std::vector<NicTraffic> sorted;
  for (size_t i : order) sorted.push_back(std::move(out.nics[i]));
  out.nics = std::move(sorted);
  return out;
}

}  // namespace nshim::phynet
