// Choosing the RDMA device, port and GID of one rank of the ibverbs transport, as NCCL does:
// NCCLSHIM_IB_HCA names devices like NCCL_IB_HCA ("rxe0", "mlx5_0:1", "=mlx5_0", "^mlx5_1", comma
// lists; prefixes match unless '=' leads); without it, the first device whose RoCE v2 GID holds the
// rank's IP address, else the first device with an active port. The GID index is scanned (RoCE v2,
// IPv4-mapped, non-zero, not link-local; the rank's address preferred) unless NCCLSHIM_IB_GID_INDEX
// gives one. Every refusal says what exists: the devices with their ports, or the GID table.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "transport/ibverbs/ibverbs_resources.h"

namespace nshim {

struct DeviceRequest {
  std::string hca;                         // NCCLSHIM_IB_HCA; "" = automatic
  int gidIndex = -1;                       // NCCLSHIM_IB_GID_INDEX; -1 = scan
  std::array<uint8_t, 16> preferredGid{};  // the rank's IP as a GID (::ffff:a.b.c.d); zero = none
};

// An opened device with the port and GID this rank uses.
struct OpenDevice {
  ContextPtr context;
  std::string name;
  int port = 1;
  int gidIndex = -1;  // -1: InfiniBand link layer addressed by LID only
  ibv_gid gid{};
  uint16_t lid = 0;
  bool ethernet = true;  // RoCE (GRH always) or InfiniBand
  ibv_mtu activeMtu = IBV_MTU_1024;
  ibv_device_attr deviceAttr{};
  ibv_port_attr portAttr{};
};

Result<OpenDevice> openIbverbsDevice(const VerbsApi& api, const DeviceRequest& request);

// "::ffff:10.77.0.1" for a GID.
std::string gidText(const uint8_t* gid);
// The GID form of an IPv4 (mapped) or IPv6 socket address; zeros for other families.
std::array<uint8_t, 16> addressAsGid(const sockaddr* address);
// Gb/s of an active port: speed per lane times lanes (for efficiency reports); 0 when unknown.
double portRateGbps(const ibv_port_attr& attr);

}  // namespace nshim
