// The deadlock check of checkWorkload: sends and receives that wait on each other are refused naming
// the ranks, ops and lines; the same traffic grouped (one NCCL group) or ordered so that each send
// meets its receive passes; a collective between them counts as a meeting point of every member.
#include <string>
#include <vector>

#include "tests/catch.h"
#include "workload/workload_check.h"

namespace nshim::workload {
namespace {

constexpr uint64_t kComm = 0x77;

WorkOp p2p(OpKind kind, int peer, uint64_t seq, int line, int group = 0) {
  WorkOp op;
  op.commId = kComm;
  op.seq = seq;
  op.kind = kind;
  op.count = 1024;
  op.type = DataType::kFloat32;
  op.bytes = 4096;
  op.peer = peer;
  op.group = group;
  op.source = SourceLine("order.txt", line);
  return op;
}

WorkOp allreduce(uint64_t seq, int line) {
  WorkOp op = p2p(OpKind::kAllReduce, -1, seq, line);
  return op;
}

// Two ranks, each with `ops(rank)`.
Workload pair(const std::vector<WorkOp>& rank0, const std::vector<WorkOp>& rank1) {
  Workload w;
  w.worldSize = 2;
  w.comms.push_back(CommGroup{kComm, {0, 1}, "world"});
  w.ranks.resize(2);
  w.ranks[0] = {0, rank0, {}};
  w.ranks[1] = {1, rank1, {}};
  w.indexComms();
  return w;
}

TEST_CASE("sends that wait on each other are a deadlock, named with ranks and lines", "[phynet]") {
  // Both ranks send first: each send waits for a receive the other posts only after its send.
  Workload w = pair({p2p(OpKind::kSend, 1, 0, 10), p2p(OpKind::kRecv, 1, 1, 11)},
                    {p2p(OpKind::kSend, 0, 0, 20), p2p(OpKind::kRecv, 0, 1, 21)});
  Status s = checkWorkload(w);
  REQUIRE_FALSE(s.ok());
  const std::string& m = s.message();
  CHECK(m.find("deadlocks") != std::string::npos);
  CHECK(m.find("2 of 2 ranks wait") != std::string::npos);
  CHECK(m.find("rank 0 (its rank 0) waits in send") != std::string::npos);
  CHECK(m.find("order.txt:10) for rank 1") != std::string::npos);
  CHECK(m.find("order.txt:20) for rank 0") != std::string::npos);
}

TEST_CASE("the same sends grouped, or ordered to meet, pass", "[phynet]") {
  SECTION("one NCCL group on each rank") {
    Workload w = pair({p2p(OpKind::kSend, 1, 0, 10, 5), p2p(OpKind::kRecv, 1, 1, 11, 5)},
                      {p2p(OpKind::kSend, 0, 0, 20, 9), p2p(OpKind::kRecv, 0, 1, 21, 9)});
    CHECK(checkWorkload(w).ok());
  }
  SECTION("rank 1 receives first") {
    Workload w = pair({p2p(OpKind::kSend, 1, 0, 10), p2p(OpKind::kRecv, 1, 1, 11)},
                      {p2p(OpKind::kRecv, 0, 0, 20), p2p(OpKind::kSend, 0, 1, 21)});
    CHECK(checkWorkload(w).ok());
  }
}

TEST_CASE("a collective is a meeting point: a send behind it cannot meet a receive before it", "[phynet]") {
  // Rank 0 waits in the allreduce, which rank 1 reaches only after its receive, whose send rank 0
  // issues only after the allreduce.
  Workload bad =
      pair({allreduce(0, 10), p2p(OpKind::kSend, 1, 1, 11)}, {p2p(OpKind::kRecv, 0, 0, 20), allreduce(1, 21)});
  Status s = checkWorkload(bad);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("waits in allreduce") != std::string::npos);
  CHECK(s.message().find("for every member") != std::string::npos);
  Workload good =
      pair({allreduce(0, 10), p2p(OpKind::kSend, 1, 1, 11)}, {allreduce(0, 20), p2p(OpKind::kRecv, 0, 1, 21)});
  CHECK(checkWorkload(good).ok());
}

}  // namespace
}  // namespace nshim::workload
