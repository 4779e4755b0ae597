// Device, port and GID selection for the ibverbs transport (see ibverbs_device.h).
#include "transport/ibverbs/ibverbs_device.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "common/log.h"

namespace nshim {
namespace {

struct HcaFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::pair<std::string, int>> entries;  // name, port (0 = any)

  bool matches(const std::string& name, int port) const {
    if (entries.empty()) return true;
    bool hit = false;
    for (const auto& [entry, entryPort] : entries) {
      bool nameHit = exact ? name == entry : name.compare(0, entry.size(), entry) == 0;
      if (nameHit && (entryPort == 0 || entryPort == port)) hit = true;
    }
    return hit != exclude;
  }
};

HcaFilter parseHca(std::string spec) {
  HcaFilter filter;
  if (!spec.empty() && spec[0] == '^') {
    filter.exclude = true;
    spec.erase(0, 1);
  }
  if (!spec.empty() && spec[0] == '=') {
    filter.exact = true;
    spec.erase(0, 1);
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) {
      size_t colon = item.find(':');
      int port = colon == std::string::npos ? 0 : std::atoi(item.c_str() + colon + 1);
      filter.entries.emplace_back(item.substr(0, colon), port);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return filter;
}

struct GidInfo {
  int index = 0;
  ibv_gid gid{};
  std::string type;  // "RoCE v2", "RoCE v1", "IB", "?"
};

bool isZero(const uint8_t* gid) {
  for (int i = 0; i < 16; ++i) {
    if (gid[i] != 0) return false;
  }
  return true;
}
bool isV4Mapped(const uint8_t* gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}
bool isLinkLocal(const uint8_t* gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

std::string sysfsGidType(const std::string& device, int port, int index) {
  std::ifstream in("/sys/class/infiniband/" + device + "/ports/" + std::to_string(port) + "/gid_attrs/types/" +
                   std::to_string(index));
  std::string line;
  if (!std::getline(in, line)) return "?";
  if (line.find("v2") != std::string::npos) return "RoCE v2";
  if (line.find("v1") != std::string::npos) return "RoCE v1";
  return line.empty() ? "?" : line;
}

// The non-empty entries of a port's GID table with their types.
std::vector<GidInfo> readGids(const VerbsApi& api, ibv_context* context, const std::string& device, int port,
                              int tableLength) {
  std::vector<GidInfo> gids;
  for (int index = 0; index < tableLength; ++index) {
    GidInfo info;
    info.index = index;
    if (api.queryGidEx != nullptr) {
      ibv_gid_entry entry{};
      if (api.queryGidEx(context, port, index, &entry, 0, sizeof(entry)) != 0) continue;  // empty slot
      info.gid = entry.gid;
      info.type = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
                  : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
                                                           : "IB";
    } else {
      if (api.queryGid(context, port, index, &info.gid) != 0) continue;
      info.type = sysfsGidType(device, port, index);
    }
    if (isZero(info.gid.raw)) continue;
    gids.push_back(info);
  }
  return gids;
}

std::string describeGids(const std::vector<GidInfo>& gids) {
  if (gids.empty()) return "the GID table is empty";
  std::string text;
  for (const GidInfo& g : gids)
    text += fmt::format("{}[{}] {} ({})", text.empty() ? "" : ", ", g.index, gidText(g.gid.raw), g.type);
  return text;
}

struct PortCandidate {
  int deviceIndex;
  std::string name;
  int port;
};

// Picks the GID for `dev` (its port and context set) or explains why none fits.
Status chooseGid(const VerbsApi& api, const DeviceRequest& request, OpenDevice* dev) {
  std::vector<GidInfo> gids = readGids(api, dev->context.get(), dev->name, dev->port, dev->portAttr.gid_tbl_len);
  std::string where = fmt::format("{} port {}", dev->name, dev->port);
  if (request.gidIndex >= 0) {
    for (const GidInfo& g : gids) {
      if (g.index == request.gidIndex) {
        dev->gidIndex = g.index;
        dev->gid = g.gid;
        return Status::Ok();
      }
    }
    return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_GID_INDEX={} is not a valid GID of {}: {}", request.gidIndex,
                    where, describeGids(gids));
  }
  if (!dev->ethernet) {  // InfiniBand: LID routing; keep GID 0 for the record
    dev->gidIndex = -1;
    if (!gids.empty()) dev->gid = gids.front().gid;
    return Status::Ok();
  }
  const GidInfo* best = nullptr;
  for (const GidInfo& g : gids) {
    if (g.type != "RoCE v2" || !isV4Mapped(g.gid.raw) || isLinkLocal(g.gid.raw)) continue;
    if (std::memcmp(g.gid.raw, request.preferredGid.data(), 16) == 0) {
      best = &g;
      break;
    }
    if (best == nullptr) best = &g;
  }
  if (best == nullptr) {
    return NS_ERROR(Code::kSystemError,
                    "{} has no RoCE v2 GID with an IPv4-mapped address ({}): give its network interface an "
                    "IPv4 address, or choose a GID with NCCLSHIM_IB_GID_INDEX",
                    where, describeGids(gids));
  }
  dev->gidIndex = best->index;
  dev->gid = best->gid;
  return Status::Ok();
}

// True when some RoCE v2 GID of the port holds `gid`.
bool portHasGid(const VerbsApi& api, ibv_context* context, const std::string& name, int port, int tableLength,
                const std::array<uint8_t, 16>& gid) {
  for (const GidInfo& g : readGids(api, context, name, port, tableLength)) {
    if (std::memcmp(g.gid.raw, gid.data(), 16) == 0) return true;
  }
  return false;
}

}  // namespace

std::string gidText(const uint8_t* gid) {
  char text[INET6_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET6, gid, text, sizeof(text));
  return text;
}

std::array<uint8_t, 16> addressAsGid(const sockaddr* address) {
  std::array<uint8_t, 16> gid{};
  if (address->sa_family == AF_INET) {
    gid[10] = gid[11] = 0xff;
    std::memcpy(gid.data() + 12, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
  } else if (address->sa_family == AF_INET6) {
    std::memcpy(gid.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
  }
  return gid;
}

double portRateGbps(const ibv_port_attr& attr) {
  double lane = 0;
  switch (attr.active_speed) {
    case 1: lane = 2.5; break;
    case 2: lane = 5; break;
    case 4:
    case 8: lane = 10; break;
    case 16: lane = 14; break;
    case 32: lane = 25; break;
    case 64: lane = 50; break;
    case 128: lane = 100; break;
    default: break;
  }
  int lanes = attr.active_width == 1    ? 1
              : attr.active_width == 2  ? 4
              : attr.active_width == 4  ? 8
              : attr.active_width == 8  ? 12
              : attr.active_width == 16 ? 2
                                        : 0;
  return lane * lanes;
}

Result<OpenDevice> openIbverbsDevice(const VerbsApi& api, const DeviceRequest& request) {
  int count = 0;
  DeviceListPtr list(api.getDeviceList(&count));
  if (!list || count == 0) {
    return NS_ERROR(Code::kSystemError,
                    "no RDMA device found (ibv_get_device_list returned none): the ibverbs transport needs an RDMA "
                    "NIC or soft-RoCE (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <interface>)");
  }
  HcaFilter filter = parseHca(request.hca);
  std::string inventory;  // every device and port, for error messages
  std::vector<PortCandidate> active, matchedInactive;
  PortCandidate* byAddress = nullptr;
  std::vector<PortCandidate> addressHits;
  bool wantAddress = !isZero(request.preferredGid.data()) && request.hca.empty();
  for (int d = 0; d < count; ++d) {
    std::string name = api.getDeviceName(list.get()[d]);
    ContextPtr context(api.openDevice(list.get()[d]));
    if (!context) {
      inventory += fmt::format("{}{} (cannot be opened: {})", inventory.empty() ? "" : "; ", name, strerror(errno));
      continue;
    }
    ibv_device_attr attr{};
    if (api.queryDevice(context.get(), &attr) != 0) continue;
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr portAttr{};
      if (api.queryPort(context.get(), static_cast<uint8_t>(port), &portAttr) != 0) continue;
      bool up = portAttr.state == IBV_PORT_ACTIVE;
      inventory += fmt::format("{}{} port {} {} ({})", inventory.empty() ? "" : "; ", name, port,
                               api.portStateStr(portAttr.state),
                               portAttr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
      if (!filter.matches(name, port)) continue;
      (up ? active : matchedInactive).push_back(PortCandidate{d, name, port});
      if (up && wantAddress && portHasGid(api, context.get(), name, port, portAttr.gid_tbl_len, request.preferredGid)) {
        addressHits.push_back(PortCandidate{d, name, port});
      }
    }
  }
  if (!addressHits.empty()) byAddress = &addressHits.front();
  if (active.empty()) {
    if (!matchedInactive.empty()) {
      const PortCandidate& c = matchedInactive.front();
      return NS_ERROR(Code::kSystemError, "port {} of RDMA device {} is not active; devices: {}", c.port, c.name,
                      inventory);
    }
    if (!request.hca.empty()) {
      return NS_ERROR(Code::kInvalidArgument, "NCCLSHIM_IB_HCA={} matches no RDMA device; devices: {}", request.hca,
                      inventory);
    }
    return NS_ERROR(Code::kSystemError, "no RDMA device has an active port; devices: {}", inventory);
  }
  const PortCandidate& chosen = byAddress != nullptr ? *byAddress : active.front();
  OpenDevice dev;
  dev.name = chosen.name;
  dev.port = chosen.port;
  dev.context.reset(api.openDevice(list.get()[chosen.deviceIndex]));
  if (!dev.context) return NS_ERROR(Code::kSystemError, "cannot open RDMA device {}: {}", dev.name, strerror(errno));
  if (api.queryDevice(dev.context.get(), &dev.deviceAttr) != 0 ||
      api.queryPort(dev.context.get(), static_cast<uint8_t>(dev.port), &dev.portAttr) != 0) {
    return NS_ERROR(Code::kSystemError, "cannot query RDMA device {} port {}", dev.name, dev.port);
  }
  dev.ethernet = dev.portAttr.link_layer == IBV_LINK_LAYER_ETHERNET;
  dev.lid = dev.portAttr.lid;
  dev.activeMtu = dev.portAttr.active_mtu;
  NS_RETURN_IF_ERROR(chooseGid(api, request, &dev));
  NS_INFO("ibverbs: using {} port {} GID [{}] {}, MTU {}{}", dev.name, dev.port, dev.gidIndex, gidText(dev.gid.raw),
          128 << dev.activeMtu, byAddress != nullptr ? " (matches this rank's address)" : "");
  return dev;
}

}  // namespace nshim
