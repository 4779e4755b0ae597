// How NCCL's Socket transport would move data for this job, read from NCCL's own variables so that
// the TCP transport can move it the same way (docs/socket_transport.md). NCCL gives every channel a
// connection per direction: a control socket that carries each message's size (and messages of up
// to NCCL_SOCKET_INLINE bytes) and, when NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD > 0, that
// many data sockets over which a message is cut into tasks of at least NCCL_SOCKET_MIN_TASKSIZE,
// handed out round robin. Unset (NCCL's -2), the two come from the NIC's PCI vendor: AWS 2 x 8,
// Google Cloud 4 x 1, anything else (loopback included) 0: the control socket carries everything.
// NCCL_SOCKET_SNDBUF / NCCL_SOCKET_RCVBUF: -1 (unset) leaves the kernel's autotuning.
//
// Every value is read through one lookup (readNcclSocketSettings) so that a replay can take them
// from the trace's recorded NCCL environment instead of its own.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace nshim {

struct NcclSocketSettings {
  int threads = 0;                 // NCCL_SOCKET_NTHREADS (1..16)
  int socketsPerThread = 1;        // NCCL_NSOCKS_PERTHREAD
  size_t minTaskBytes = 64 << 10;  // NCCL_SOCKET_MIN_TASKSIZE
  size_t inlineBytes = 128;        // NCCL_SOCKET_INLINE: payloads this small stay on the control socket
  int sendBufferBytes = -1;        // NCCL_SOCKET_SNDBUF (-1: the kernel's autotuning)
  int recvBufferBytes = -1;        // NCCL_SOCKET_RCVBUF
  std::string source;              // where threads x sockets came from, for logs ("NIC vendor 0x1d0f (AWS)")

  // Data sockets per connection (0: the control socket carries the payload too).
  int dataSockets() const { return threads * socketsPerThread; }
  // Sockets one NCCL connection uses: its control socket and its data sockets.
  int socketsPerConnection() const { return 1 + dataSockets(); }
  // The bytes of task `index` of a payload of `bytes` (tasks of max(minTaskBytes, ceil(bytes /
  // dataSockets)), the last one shorter), and how many tasks it makes. Without data sockets, or for
  // a payload of up to inlineBytes: one task on the control socket.
  size_t taskBytes(size_t bytes) const;
  int taskCount(size_t bytes) const;
  bool onControlSocket(size_t bytes) const { return dataSockets() == 0 || bytes <= inlineBytes; }
};

// A variable's value, or nullopt when it is unset.
using NcclVariableLookup = std::function<std::optional<std::string>(const char* name)>;
// The NCCL_* values in force: the environment's, else a capture's (common/nccl_env.h ncclVariable,
// which also marks them read for the report).
NcclVariableLookup ncclSettingsLookup();

// NCCL's Socket-transport settings for the NIC `interfaceName` (its PCI vendor under
// `sysClassNet`/<name>/device/vendor decides the automatic threads and sockets). A malformed or
// out-of-range value is an error naming the variable.
Result<NcclSocketSettings> readNcclSocketSettings(const NcclVariableLookup& lookup, const std::string& interfaceName,
                                                  const std::string& sysClassNet = "/sys/class/net");

}  // namespace nshim
