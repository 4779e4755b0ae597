// The traffic model without a node layout (flat: every rank its own node) gives what it gives with
// an explicit flat layout, for every collective and communicator sizes asked in turn: the flat
// layouts it keeps per size (workload/traffic_model.cc) never answer for another size.
#include <map>
#include <vector>

#include "model/node_layout.h"
#include "tests/catch.h"
#include "workload/traffic_model.h"

namespace nshim::workload {
namespace {

std::map<int, uint64_t> sendsOf(const WorkOp& op, int rank, int nranks, const NodeLayout* nodes) {
  std::map<int, uint64_t> sends;
  CollectiveOptions options;
  forEachModelSend(
      op, rank, nranks, options, [&](int peer, uint64_t bytes) { sends[peer] += bytes; }, nodes);
  return sends;
}

TEST_CASE("the traffic model's flat layout is the one NodeLayout::flat builds, per size", "[phynet][traffic]") {
  const OpKind kinds[] = {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                          OpKind::kBroadcast, OpKind::kReduce,    OpKind::kAllToAll,
                          OpKind::kGather,    OpKind::kScatter,   OpKind::kSend};
  // Sizes interleaved, so that a cached layout of the wrong size would be used if it could be.
  for (int round = 0; round < 2; ++round) {
    for (int nranks : {2, 3, 8, 5, 16, 2}) {
      const NodeLayout flat = NodeLayout::flat(nranks);
      for (OpKind kind : kinds) {
        for (uint64_t count : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 22}) {
          WorkOp op;
          op.kind = kind;
          op.count = count;
          op.root = 1 % nranks;
          op.peer = (nranks - 1) % nranks;
          for (int rank = 0; rank < nranks; ++rank) {
            INFO("kind " << opKindName(kind) << " nranks " << nranks << " count " << count << " rank " << rank);
            REQUIRE(sendsOf(op, rank, nranks, nullptr) == sendsOf(op, rank, nranks, &flat));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nshim::workload
