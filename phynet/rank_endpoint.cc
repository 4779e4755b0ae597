// Rank endpoints: local rank, NIC resolution, encoding and host labels (rank_endpoint.h).
#include "phynet/rank_endpoint.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "common/host_identity.h"

namespace nshim::phynet {
namespace {

constexpr char kSeparator = '\t';

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(kSeparator, start);
    fields.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return fields;
    start = end + 1;
  }
}

std::string withoutPort(const SocketAddress& address) {
  std::string text = address.toString();
  size_t colon = text.rfind(':');
  text = colon == std::string::npos ? text : text.substr(0, colon);
  if (text.size() > 2 && text.front() == '[') text = text.substr(1, text.size() - 2);
  return text;
}

}  // namespace

int localRankOf(const std::vector<std::string>& hostIds, int self, int launcherLocalRank) {
  if (launcherLocalRank >= 0) return launcherLocalRank;
  int position = 0;
  for (int r = 0; r < self && r < static_cast<int>(hostIds.size()); ++r) {
    if (hostIds[r] == hostIds[self]) ++position;
  }
  return position;
}

Result<RankEndpoint> resolveEndpoint(TransportKind kind, const SocketInterface& interface,
                                     const IbverbsOptions& ibverbs, const std::string& hostId,
                                     const std::string& hostLabel, int localRank) {
  RankEndpoint endpoint;
  endpoint.hostId = hostId;
  endpoint.hostName = hostName();
  endpoint.localRank = localRank;
  Result<InterfaceAddress> found = findInterface(interface);
  if (!found.ok()) {
    return NS_ERROR(Code::kInvalidArgument, "host {}, local rank {}: socket interface '{}' does not exist there: {}",
                    hostLabel, localRank, interface.spec, found.status().message());
  }
  endpoint.nic = found->name;
  endpoint.address = withoutPort(found->address);
  if (kind == TransportKind::kIbverbs) {
    Result<IbverbsPortInfo> port = queryIbverbsPort(ibverbs, found->address.isLoopback() ? "" : endpoint.address);
    if (!port.ok()) {
      return NS_ERROR(Code::kInvalidArgument, "host {}, local rank {}: RDMA device '{}' cannot be used: {}", hostLabel,
                      localRank, ibverbs.hca.empty() ? "(automatic)" : ibverbs.hca, port.status().message());
    }
    endpoint.nic = port->device;
    endpoint.port = port->port;
    endpoint.gid = port->gid;
  }
  return endpoint;
}

std::string encodeEndpoint(const RankEndpoint& e) {
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}", e.hostId, e.hostName, e.localRank, e.nic, e.address, e.port, e.gid);
}

Result<RankEndpoint> decodeEndpoint(const std::string& line) {
  std::vector<std::string> f = splitFields(line);
  if (f.size() != 7) return NS_ERROR(Code::kInvalidArgument, "endpoint line has {} fields, expected 7", f.size());
  RankEndpoint e;
  e.hostId = f[0];
  e.hostName = f[1];
  e.localRank = std::atoi(f[2].c_str());
  e.nic = f[3];
  e.address = f[4];
  e.port = std::atoi(f[5].c_str());
  e.gid = f[6];
  return e;
}

std::vector<std::string> hostLabels(const std::vector<std::string>& hostIds) {
  // An identity without '/' was given by NCCLSHIM_HOSTID: it is the name the user chose; else the
  // hostname is what comes before the first '/'.
  auto nameOf = [](const std::string& id) { return id.substr(0, id.find('/')); };
  std::map<std::string, std::vector<std::string>> idsByName;  // hostname -> distinct ids, first-seen order
  for (const std::string& id : hostIds) {
    std::vector<std::string>& ids = idsByName[nameOf(id)];
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  std::vector<std::string> labels;
  for (const std::string& id : hostIds) {
    const std::vector<std::string>& ids = idsByName[nameOf(id)];
    if (id.find('/') == std::string::npos || ids.size() == 1) {
      labels.push_back(nameOf(id));
      continue;
    }
    size_t k = std::find(ids.begin(), ids.end(), id) - ids.begin();
    labels.push_back(fmt::format("{}#{}", nameOf(id), k + 1));
  }
  return labels;
}

std::vector<std::string> hostLabels(const std::vector<RankEndpoint>& endpoints) {
  std::vector<std::string> ids;
  for (const RankEndpoint& e : endpoints) ids.push_back(e.hostId);
  return hostLabels(ids);
}

std::string describeEndpoint(const RankEndpoint& e, const std::string& hostLabel) {
  std::string text = fmt::format("host {}, local rank {}, NIC {} {}", hostLabel, e.localRank, e.nic, e.address);
  if (!e.gid.empty()) text += fmt::format(" port {} GID {}", e.port, e.gid);
  return text;
}

}  // namespace nshim::phynet
