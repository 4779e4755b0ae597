// Engine communicator creation over TCP and in-process transports, and communicator ids.
#include "libshim/comm_factory.h"

#include <random>

#include "common/fnv1a.h"
#include "transport/transport_factory.h"

namespace nshim {
namespace {

uint64_t mix(uint64_t value) {  // splitmix64 finaliser
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

}  // namespace

Result<std::unique_ptr<Communicator>> connectCommunicator(const UniqueId& id, int rank, int nranks) {
  NS_ASSIGN_OR_RETURN(TransportKind kind, transportKindFromEnvironment());
  NS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, connectTransport(kind, id, rank, nranks));
  return makeCommunicator(std::move(transport));
}

std::unique_ptr<Communicator> makeCommunicator(std::unique_ptr<Transport> transport) {
  return std::make_unique<Communicator>(std::move(transport), CollectiveOptions::fromEnvironment());
}

uint64_t commIdFromUniqueId(const UniqueId& id) { return fnv1a64(id.bytes, sizeof(id.bytes)); }

uint64_t commIdFromSplit(uint64_t parentId, int color, uint64_t splitSeq) {
  return mix(parentId ^ mix(static_cast<uint64_t>(static_cast<uint32_t>(color)) ^ mix(splitSeq)));
}

uint64_t randomCommId() {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

}  // namespace nshim
