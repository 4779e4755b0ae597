// The process-wide table of published in-process transports.
#include "libshim/inproc_registry.h"

#include <map>
#include <mutex>
#include <random>

namespace nshim {
namespace {

struct Entry {
  std::vector<std::unique_ptr<Transport>> transports;
  size_t unclaimed = 0;
};

std::mutex gMutex;
std::map<uint64_t, Entry>& table() {
  static auto* entries = new std::map<uint64_t, Entry>();
  return *entries;
}

}  // namespace

uint64_t publishInProcessTransports(std::vector<std::unique_ptr<Transport>> transports) {
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard<std::mutex> lock(gMutex);
  uint64_t key = 0;
  while (key == 0 || table().count(key) > 0) key = generator();
  Entry& entry = table()[key];
  entry.unclaimed = transports.size();
  entry.transports = std::move(transports);
  return key;
}

Result<std::unique_ptr<Transport>> claimInProcessTransport(uint64_t key, int rank) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = table().find(key);
  if (it == table().end() || rank < 0 || static_cast<size_t>(rank) >= it->second.transports.size() ||
      !it->second.transports[rank]) {
    return NS_ERROR(Code::kInternal, "in-process communicator {:#x} has no unclaimed transport for rank {}", key, rank);
  }
  std::unique_ptr<Transport> transport = std::move(it->second.transports[rank]);
  if (--it->second.unclaimed == 0) table().erase(it);
  return transport;
}

}  // namespace nshim
