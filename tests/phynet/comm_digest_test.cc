// The pieces of validation across ranks that hold only their own operations: operations packed for
// rank 0 come back field for field (sources re-interned), and per-communicator digests disagree
// exactly where checkWorkload finds a collective or send/receive mismatch, and not where it finds
// none (a reduction on a non-reducing collective, a different group id).
#include <string>
#include <tuple>
#include <vector>

#include "phynet/comm_digest.h"
#include "phynet/op_packing.h"
#include "tests/catch.h"
#include "workload/workload_check.h"

namespace nshim::phynet {
namespace {

constexpr uint64_t kWorld = 0x11, kPair = 0x22;

WorkOp makeOp(uint64_t comm, OpKind kind, uint64_t seq, uint64_t count, int line) {
  WorkOp op;
  op.commId = comm;
  op.seq = seq;
  op.kind = kind;
  op.count = count;
  op.type = DataType::kFloat32;
  op.bytes = opBytes(kind, count, op.type, comm == kWorld ? 4 : 2);
  op.source = SourceLine("digest.txt", line);
  return op;
}

// 4 ranks: an allreduce and an allgather on the world, then ranks 0 and 1 exchange on a pair.
Workload sample() {
  Workload w;
  w.worldSize = 4;
  w.comms = {CommGroup{kWorld, {0, 1, 2, 3}, "world"}, CommGroup{kPair, {0, 1}, "pp"}};
  w.ranks.resize(4);
  for (int g = 0; g < 4; ++g) {
    w.ranks[g].globalRank = g;
    w.ranks[g].ops = {makeOp(kWorld, OpKind::kAllReduce, 0, 1024, 10 + g),
                      makeOp(kWorld, OpKind::kAllGather, 1, 256, 20 + g)};
  }
  WorkOp send = makeOp(kPair, OpKind::kSend, 0, 512, 30);
  send.peer = 1;
  WorkOp recv = makeOp(kPair, OpKind::kRecv, 0, 512, 31);
  recv.peer = 0;
  w.ranks[0].ops.push_back(send);
  w.ranks[1].ops.push_back(recv);
  w.indexComms();
  return w;
}

CommsToExamine examine(const Workload& w) {
  std::vector<std::vector<int64_t>> digests;
  for (int g = 0; g < w.worldSize; ++g) digests.push_back(digestRankOps(w, g));
  return commsToExamine(w, digests, 16);
}

TEST_CASE("packed operations come back field for field, with their sources", "[phynet]") {
  std::vector<WorkOp> ops = sample().ranks[0].ops;
  ops[1].source = SourceLine("other-file.csv", 77);
  ops[1].issueNs = 123456789;
  ops[1].computeNs = 42;
  ops[1].recordedNs = -1;
  ops[1].group = 7;
  ops[1].reduce = ReduceKind::kMax;
  ops[2].source = SourceLine();
  Result<std::vector<WorkOp>> back = unpackOps(packOps(ops));
  REQUIRE(back.ok());
  REQUIRE(back->size() == ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const WorkOp &a = ops[i], &b = (*back)[i];
    CHECK(std::tie(a.commId, a.seq, a.count, a.type, a.reduce, a.root, a.peer, a.bytes, a.issueNs, a.computeNs,
                   a.recordedNs, a.kind, a.group) == std::tie(b.commId, b.seq, b.count, b.type, b.reduce, b.root,
                                                              b.peer, b.bytes, b.issueNs, b.computeNs, b.recordedNs,
                                                              b.kind, b.group));
    CHECK(a.source.str() == b.source.str());
  }
  // Only the ops asked for; words cut short are refused, not read past.
  Result<std::vector<WorkOp>> sends =
      unpackOps(packOps(ops, [](const WorkOp& op) { return op.kind == OpKind::kSend; }));
  REQUIRE(sends.ok());
  REQUIRE(sends->size() == 1);
  CHECK((*sends)[0].kind == OpKind::kSend);
  std::vector<int64_t> words = packOps(ops);
  words.pop_back();
  CHECK_FALSE(unpackOps(words).ok());
  CHECK_FALSE(unpackOps({}).ok());
}

TEST_CASE("digests agree on a consistent workload and list the communicators with sends", "[phynet]") {
  Workload w = sample();
  REQUIRE(checkWorkload(w).ok());
  CommsToExamine e = examine(w);
  CHECK(e.disagreeingTotal == 0);
  CHECK(e.disagreeing.empty());
  CHECK(e.pointToPoint == std::vector<uint64_t>{kPair});
}

TEST_CASE("digests disagree exactly where checkWorkload finds a mismatch", "[phynet]") {
  struct Case {
    const char* what;
    void (*edit)(Workload&);
    bool mismatch;
    uint64_t comm;
  };
  const Case cases[] = {
      {"count and bytes of one member's allreduce",
       [](Workload& w) { w.ranks[2].ops[0] = makeOp(kWorld, OpKind::kAllReduce, 0, 2048, 12); }, true, kWorld},
      {"the reduction of an allreduce", [](Workload& w) { w.ranks[3].ops[0].reduce = ReduceKind::kMax; }, true, kWorld},
      {"the reduction of an allgather (not compared)", [](Workload& w) { w.ranks[3].ops[1].reduce = ReduceKind::kMax; },
       false, 0},
      {"a group id (not compared)", [](Workload& w) { w.ranks[1].ops[0].group = 5; }, false, 0},
      {"a missing collective", [](Workload& w) { w.ranks[1].ops.erase(w.ranks[1].ops.begin() + 1); }, true, kWorld},
      {"the kind of a collective",
       [](Workload& w) { w.ranks[0].ops[1] = makeOp(kWorld, OpKind::kReduceScatter, 1, 256, 20); }, true, kWorld},
      {"the bytes of a receive",
       [](Workload& w) {
         w.ranks[1].ops[2] = makeOp(kPair, OpKind::kRecv, 0, 256, 31);
         w.ranks[1].ops[2].peer = 0;
       },
       true, kPair},
      {"a send with no receive", [](Workload& w) { w.ranks[1].ops.pop_back(); }, true, kPair},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Workload w = sample();
    c.edit(w);
    w.indexComms();
    Status checked = checkWorkload(w);
    CommsToExamine e = examine(w);
    CHECK(checked.ok() == !c.mismatch);
    CHECK((e.disagreeingTotal > 0) == c.mismatch);
    if (c.mismatch) CHECK(e.disagreeing == std::vector<uint64_t>{c.comm});
  }
}

TEST_CASE("a rank that holds only its own ops fingerprints the communicators alone", "[phynet]") {
  // What validateAcrossRanks relies on: each rank's structure check and digest need no other rank.
  Workload all = sample();
  for (int g = 0; g < all.worldSize; ++g) {
    Workload mine = sample();
    mine.onlyRank = g;
    for (int other = 0; other < mine.worldSize; ++other) {
      if (other != g) mine.ranks[other].ops.clear();
    }
    CHECK(checkRankStructure(mine, g).ok());
    CHECK(digestRankOps(mine, g) == digestRankOps(all, g));
  }
  Workload bad = sample();
  bad.ranks[2].ops[0].bytes += 4;  // breaks the bytes rule: rank 2's own check names it
  Status s = checkRankStructure(bad, 2);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("rank 2 on communicator") != std::string::npos);
  CHECK(s.message().find("does not follow the bytes rule") != std::string::npos);
  CHECK(checkRankStructure(bad, 1).ok());
}

}  // namespace
}  // namespace nshim::phynet
