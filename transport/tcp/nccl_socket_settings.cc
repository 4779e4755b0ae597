// Reads NCCL's Socket-transport variables the way NCCL 2.28 resolves them (net_socket.cc:
// ncclNetSocketGetNsockNthread; misc/socket.cc for the buffers).
#include "transport/tcp/nccl_socket_settings.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "common/env.h"
#include "common/log.h"
#include "common/nccl_env.h"

namespace nshim {
namespace {

constexpr int kMaxThreads = 16;      // NCCL's MAX_THREADS
constexpr int kMaxDataSockets = 64;  // NCCL's MAX_SOCKETS
constexpr int64_t kAuto = -2;        // NCCL's "not set" for the two counts

// The variable as an integer in [low, high] (sizes may carry K/M/G), `fallback` when unset.
Result<int64_t> readInteger(const NcclVariableLookup& lookup, const char* name, int64_t fallback, int64_t low,
                            int64_t high, bool bytes) {
  std::optional<std::string> text = lookup(name);
  if (!text || text->empty()) return fallback;
  int64_t value = -1;
  bool parsed = false;
  if (bytes) {
    value = parseBytes(*text);
    parsed = value >= 0 || *text == "-1";
    if (*text == "-1") value = -1;
  } else {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text->c_str(), &end, 10);
    parsed = errno == 0 && end != text->c_str() && *end == '\0';
    value = v;
  }
  if (!parsed || value < low || value > high) {
    return NS_ERROR(Code::kInvalidArgument, "{}={}: expected {} from {} to {}", name, *text,
                    bytes ? "a size (K/M/G suffixes allowed)" : "an integer", low, high);
  }
  return value;
}

// NCCL's automatic threads x sockets from the NIC's PCI vendor.
void automaticCounts(const std::string& interfaceName, const std::string& sysClassNet, int* threads, int* sockets,
                     std::string* source) {
  *threads = 0;
  *sockets = 1;
  *source = "NCCL's default for a NIC of another vendor or none (" + interfaceName + ")";
  std::ifstream file(sysClassNet + "/" + interfaceName + "/device/vendor");
  std::string vendor;
  if (!file || !(file >> vendor)) return;
  if (vendor == "0x1d0f") {
    *threads = 2, *sockets = 8, *source = "NCCL's default for an AWS NIC (vendor 0x1d0f, " + interfaceName + ")";
  } else if (vendor == "0x1ae0") {
    *threads = 4, *sockets = 1,
    *source = "NCCL's default for a Google Cloud NIC (vendor 0x1ae0, " + interfaceName + ")";
  } else {
    *source = "NCCL's default for a NIC of vendor " + vendor + " (" + interfaceName + ")";
  }
}

}  // namespace

size_t NcclSocketSettings::taskBytes(size_t bytes) const {
  if (onControlSocket(bytes)) return bytes;
  const size_t sockets = static_cast<size_t>(dataSockets());
  return std::max(minTaskBytes, (bytes + sockets - 1) / sockets);
}

int NcclSocketSettings::taskCount(size_t bytes) const {
  const size_t task = taskBytes(bytes);
  return task == 0 ? 1 : static_cast<int>((bytes + task - 1) / task);
}

NcclVariableLookup ncclSettingsLookup() {
  return [](const char* name) { return ncclVariable(name); };
}

Result<NcclSocketSettings> readNcclSocketSettings(const NcclVariableLookup& lookup, const std::string& interfaceName,
                                                  const std::string& sysClassNet) {
  NcclSocketSettings s;
  NS_ASSIGN_OR_RETURN(int64_t threads, readInteger(lookup, "NCCL_SOCKET_NTHREADS", kAuto, kAuto, 1 << 20, false));
  NS_ASSIGN_OR_RETURN(int64_t perThread, readInteger(lookup, "NCCL_NSOCKS_PERTHREAD", kAuto, kAuto, 1 << 20, false));
  if (threads == -1 || perThread == -1) {
    return NS_ERROR(Code::kInvalidArgument, "NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD take 0 or more");
  }
  if (threads > kMaxThreads) {
    NS_WARN("NCCL_SOCKET_NTHREADS={} is above NCCL's maximum: {} (as NCCL)", threads, kMaxThreads);
    threads = kMaxThreads;
  }
  s.source = "NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD";
  if (threads == kAuto || perThread == kAuto) {
    int autoThreads = 0, autoSockets = 1;
    automaticCounts(interfaceName, sysClassNet, &autoThreads, &autoSockets, &s.source);
    if (threads == kAuto) threads = autoThreads;
    if (perThread == kAuto) perThread = autoSockets;
  }
  if (threads * perThread > kMaxDataSockets) {
    perThread = kMaxDataSockets / threads;
    NS_WARN(
        "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD is above NCCL's maximum of {} sockets: {} per thread "
        "(as NCCL)",
        kMaxDataSockets, perThread);
  }
  s.threads = static_cast<int>(threads);
  s.socketsPerThread = static_cast<int>(perThread);
  NS_ASSIGN_OR_RETURN(int64_t minTask,
                      readInteger(lookup, "NCCL_SOCKET_MIN_TASKSIZE", s.minTaskBytes, 1, 1 << 30, true));
  NS_ASSIGN_OR_RETURN(int64_t inlineBytes, readInteger(lookup, "NCCL_SOCKET_INLINE", s.inlineBytes, 0, 1 << 20, true));
  NS_ASSIGN_OR_RETURN(int64_t sndbuf, readInteger(lookup, "NCCL_SOCKET_SNDBUF", -1, -1, 1 << 30, true));
  NS_ASSIGN_OR_RETURN(int64_t rcvbuf, readInteger(lookup, "NCCL_SOCKET_RCVBUF", -1, -1, 1 << 30, true));
  s.minTaskBytes = static_cast<size_t>(minTask);
  s.inlineBytes = static_cast<size_t>(inlineBytes);
  s.sendBufferBytes = static_cast<int>(sndbuf);
  s.recvBufferBytes = static_cast<int>(rcvbuf);
  return s;
}

}  // namespace nshim
