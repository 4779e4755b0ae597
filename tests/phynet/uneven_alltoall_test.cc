// Uneven all-to-all groups in a trace's operations: a group with one send to and one receive from every
// other rank and unequal sizes is marked (a piece to itself allowed), while even sizes, a peer missing,
// a two-rank exchange, a peer twice and a group mixing in a collective are not.
#include <vector>

#include "tests/catch.h"
#include "workload/uneven_alltoall.h"

namespace nshim::workload {
namespace {

WorkOp p2p(OpKind kind, int peer, uint64_t bytes, int group, uint64_t comm = 7) {
  WorkOp op;
  op.kind = kind;
  op.peer = peer;
  op.bytes = bytes;
  op.count = bytes;
  op.type = DataType::kUint8;
  op.group = group;
  op.commId = comm;
  return op;
}

Workload worldOf(int n) {
  Workload w;
  w.worldSize = n;
  CommGroup c;
  c.id = 7;
  for (int r = 0; r < n; ++r) c.members.push_back(r);
  w.comms.push_back(c);
  CommGroup pair;
  pair.id = 8;
  pair.members = {0, 1};
  w.comms.push_back(pair);
  w.indexComms();
  return w;
}

// Rank 1 of 4: sends 10, 20, 30 to ranks 0, 2, 3 and receives 5 from each, plus a piece to itself.
std::vector<WorkOp> unevenGroup(int group) {
  return {p2p(OpKind::kSend, 0, 10, group), p2p(OpKind::kRecv, 0, 5, group),  p2p(OpKind::kSend, 1, 8, group),
          p2p(OpKind::kRecv, 1, 8, group),  p2p(OpKind::kSend, 2, 20, group), p2p(OpKind::kRecv, 2, 5, group),
          p2p(OpKind::kSend, 3, 30, group), p2p(OpKind::kRecv, 3, 5, group)};
}

TEST_CASE("uneven all-to-all: a complete exchange of unequal sizes is marked, group by group", "[phynet]") {
  const Workload w = worldOf(4);
  std::vector<WorkOp> ops = unevenGroup(1);
  WorkOp between;  // a collective outside any group
  between.commId = 7;
  ops.push_back(between);
  for (const WorkOp& op : unevenGroup(2)) ops.push_back(op);
  CHECK(markUnevenAllToAll(ops, w, 1) == 2);
  for (size_t i = 0; i < ops.size(); ++i) {
    INFO("op " << i);
    CHECK(ops[i].origin == (i == 8 ? OpOrigin::kCall : OpOrigin::kAllToAllV));
  }
}

TEST_CASE("uneven all-to-all: what is not one is left as it is", "[phynet]") {
  const Workload w = worldOf(4);
  auto none = [&](std::vector<WorkOp> ops, int self) {
    CHECK(markUnevenAllToAll(ops, w, self) == 0);
    for (const WorkOp& op : ops) CHECK(op.origin == OpOrigin::kCall);
  };
  std::vector<WorkOp> even;
  for (int peer : {0, 2, 3}) {
    even.push_back(p2p(OpKind::kSend, peer, 16, 1));
    even.push_back(p2p(OpKind::kRecv, peer, 16, 1));
  }
  none(even, 1);
  std::vector<WorkOp> missing = unevenGroup(1);
  missing.pop_back();  // no receive from rank 3
  none(missing, 1);
  std::vector<WorkOp> twice = unevenGroup(1);
  twice.push_back(p2p(OpKind::kSend, 0, 3, 1));
  none(twice, 1);
  std::vector<WorkOp> ring = {p2p(OpKind::kSend, 2, 10, 1), p2p(OpKind::kRecv, 0, 20, 1)};
  none(ring, 1);
  none({p2p(OpKind::kSend, 1, 10, 1, 8), p2p(OpKind::kRecv, 1, 20, 1, 8)}, 0);  // two ranks: any exchange
  std::vector<WorkOp> ungrouped = unevenGroup(0);
  none(ungrouped, 1);
  std::vector<WorkOp> mixed = unevenGroup(1);
  WorkOp collective;
  collective.commId = 7;
  collective.group = 1;
  mixed.push_back(collective);
  none(mixed, 1);
}

}  // namespace
}  // namespace nshim::workload
