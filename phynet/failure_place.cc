// Hosts and NICs of the ranks a failure names (failure_place.h).
#include "phynet/failure_place.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace nshim::phynet {
namespace {

// The global ranks written as "(global rank N)" in `message`, in order, without repeats.
std::vector<int> globalRanksNamed(const std::string& message) {
  static constexpr std::string_view kTag = "(global rank ";
  std::vector<int> ranks;
  for (size_t at = message.find(kTag); at != std::string::npos; at = message.find(kTag, at + 1)) {
    size_t i = at + kTag.size();
    int rank = 0;
    bool digits = false;
    while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])) && rank < (1 << 24)) {
      rank = rank * 10 + (message[i++] - '0');
      digits = true;
    }
    if (digits && std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) ranks.push_back(rank);
  }
  return ranks;
}

std::string describe(int rank, const RankEndpoint& e, const std::string& host) {
  std::string nic = e.nic.empty() ? "" : fmt::format(" NIC {}", e.nic);
  if (e.port > 0) nic += fmt::format(" port {}", e.port);
  if (!e.address.empty()) nic += fmt::format(" ({})", e.address);
  return fmt::format("global rank {} on host {}{}", rank, host, nic);
}

}  // namespace

std::string fabricPlaceOfFailure(const std::string& message, int self, const std::vector<RankEndpoint>& endpoints) {
  const int world = static_cast<int>(endpoints.size());
  if (self < 0 || self >= world) return "";
  std::vector<int> others;
  for (int rank : globalRanksNamed(message)) {
    if (rank != self && rank < world) others.push_back(rank);
  }
  if (others.empty()) return "";
  const std::vector<std::string> hosts = hostLabels(endpoints);
  std::string out = "; on the fabric: " + describe(self, endpoints[self], hosts[self]);
  for (int rank : others) out += ", " + describe(rank, endpoints[rank], hosts[rank]);
  const int peer = others.front();
  out += hosts[peer] == hosts[self] ? fmt::format(" (one host: {})", hosts[self])
                                    : fmt::format(": host pair {} - {}", hosts[self], hosts[peer]);
  return out;
}

}  // namespace nshim::phynet
