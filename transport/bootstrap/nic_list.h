// One NIC per rank ("rails"): NCCLSHIM_SOCKET_IFNAME and NCCLSHIM_IB_HCA (and phynet's --ifname /
// --hca) may list several entries separated by commas; local rank i of a host uses entry i mod the
// list's length, so that on a host with one NIC per GPU each rank gets its own, as NCCL gives each
// GPU the NIC closest to it. A single entry is used by every rank; an exclusion list ("^docker,lo")
// is one entry; a leading '=' (exact names) applies to every entry.
#pragma once

#include <string>
#include <vector>

namespace nshim {

// The entries of a NIC list ("=eth0,eth1" -> {"=eth0", "=eth1"}; "^lo,docker" -> itself).
std::vector<std::string> nicListEntries(const std::string& list);

// The entry local rank `localRank` uses: entry localRank mod size; entry 0 when the local rank is
// unknown (-1). "" stays "".
std::string nicForLocalRank(const std::string& list, int localRank);

}  // namespace nshim
