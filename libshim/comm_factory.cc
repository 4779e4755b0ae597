// Engine communicator creation over TCP and in-process transports.
#include "libshim/comm_factory.h"

#include "transport/transport_factory.h"

namespace nshim {

Result<std::unique_ptr<Communicator>> connectCommunicator(const UniqueId& id, int rank, int nranks) {
  NS_ASSIGN_OR_RETURN(TransportKind kind, transportKindFromEnvironment());
  NS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, connectTransport(kind, id, rank, nranks));
  return makeCommunicator(std::move(transport));
}

std::unique_ptr<Communicator> makeCommunicator(std::unique_ptr<Transport> transport) {
  return std::make_unique<Communicator>(std::move(transport), CollectiveOptions::fromEnvironment());
}

}  // namespace nshim
