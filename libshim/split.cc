// ncclCommSplit: (1) allgather every rank's (color, key) over the parent; (2) each color's first
// member (lowest key, then lowest parent rank) creates the new communicator's rendezvous: a TCP
// unique id, or published in-process transports when the parent's ranks are threads of this process;
// (3) a second allgather hands every member its leader's 128-byte rendezvous; (4) members connect.
// Allgathers, rather than sends from the leaders, keep every parent rank on the same collective
// sequence whatever its color.
#include "libshim/split.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/collectives.h"
#include "libshim/comm_factory.h"
#include "libshim/inproc_registry.h"
#include "trace/comm_id.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim {
namespace {

// The rendezvous a leader hands to its members: a unique id (TCP) or an in-process key.
struct Rendezvous {
  UniqueId id{};
};

bool isEmpty(const Rendezvous& rendezvous) {
  for (char byte : rendezvous.id.bytes) {
    if (byte != 0) return false;
  }
  return true;
}

Result<Rendezvous> createRendezvous(CommFabric fabric, int size) {
  Rendezvous rendezvous;
  if (fabric == CommFabric::kInProcess) {
    uint64_t key = publishInProcessTransports(createInProcessTransports(size));
    std::memcpy(rendezvous.id.bytes, &key, sizeof(key));
    return rendezvous;
  }
  NS_ASSIGN_OR_RETURN(rendezvous.id, createUniqueId());
  return rendezvous;
}

Result<std::unique_ptr<Communicator>> joinRendezvous(CommFabric fabric, const Rendezvous& rendezvous, int rank,
                                                     int size) {
  if (fabric == CommFabric::kInProcess) {
    uint64_t key = 0;
    std::memcpy(&key, rendezvous.id.bytes, sizeof(key));
    NS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, claimInProcessTransport(key, rank));
    return makeCommunicator(std::move(transport));
  }
  return connectCommunicator(rendezvous.id, rank, size);
}

}  // namespace

Result<std::unique_ptr<ShimComm>> splitComm(ShimComm& parent, int color, int key, bool blocking) {
  Communicator& engine = parent.engine();
  const int nranks = parent.nranks();
  const int self = parent.rank();
  const uint64_t seq = parent.nextSplitSeq();

  int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(nranks));
  NS_RETURN_IF_ERROR(allGather(engine, mine, all.data(), 2, DataType::kInt32));

  std::vector<int> members;  // parent ranks of my color, in new-rank order
  if (color != kSplitNoColor) {
    for (int r = 0; r < nranks; ++r) {
      if (all[2 * r] == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  }
  const bool leader = !members.empty() && members[0] == self;

  Rendezvous offer;
  Status leaderStatus;
  if (leader) {
    Result<Rendezvous> created = createRendezvous(parent.fabric(), static_cast<int>(members.size()));
    if (created.ok()) {
      offer = created.value();
    } else {
      leaderStatus = created.status();  // members see an empty rendezvous and fail too
    }
  }
  std::vector<Rendezvous> offers(nranks);
  NS_RETURN_IF_ERROR(allGather(engine, &offer, offers.data(), sizeof(Rendezvous), DataType::kUint8));
  if (!leaderStatus.ok()) return leaderStatus;
  if (color == kSplitNoColor) return std::unique_ptr<ShimComm>();

  const Rendezvous& chosen = offers[members[0]];
  if (isEmpty(chosen)) {
    return NS_ERROR(Code::kRemoteError,
                    "ncclCommSplit: parent rank {} (first rank of color {}) could not create the "
                    "new communicator",
                    members[0], color);
  }
  const int newRank = static_cast<int>(std::find(members.begin(), members.end(), self) - members.begin());
  const int newSize = static_cast<int>(members.size());
  NS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> child, joinRendezvous(parent.fabric(), chosen, newRank, newSize));
  NS_ASSIGN_OR_RETURN(std::unique_ptr<ShimComm> comm,
                      ShimComm::create(newRank, newSize, parent.device(), parent.fabric(),
                                       trace::commIdForSplit(parent.commId(), color, seq), blocking));
  NS_RETURN_IF_ERROR(comm->attach(std::move(child)));
  return comm;
}

}  // namespace nshim
