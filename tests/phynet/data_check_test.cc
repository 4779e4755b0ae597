// phynet --verify (phynet/data_check.h): pattern slices agree with the whole stream; the expected
// results built by hand from the members' patterns pass and any changed byte, or stale data of an
// earlier op, is caught and named; a verified replay of every op kind over in-process ranks checks
// exactly the bytes each op delivers to this rank.
#include <fmt/format.h>

#include <map>
#include <vector>

#include "phynet/data_check.h"
#include "phynet/replay.h"
#include "tests/catch.h"
#include "tests/phynet/inproc_replay.h"
#include "workload/workload_check.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

std::vector<uint8_t> pattern(uint64_t seed, size_t offset, size_t size) {
  std::vector<uint8_t> out(size);
  fillPattern(seed, offset, out.data(), size);
  return out;
}

WorkOp collective(OpKind kind, uint64_t count, int root = -1) {
  WorkOp op;
  op.kind = kind;
  op.count = count;
  op.type = DataType::kUint8;
  op.root = root;
  return op;
}

TEST_CASE("data check: a slice of the pattern equals that part of the whole stream", "[phynet]") {
  const std::vector<uint8_t> whole = pattern(42, 0, 64);
  for (size_t offset = 0; offset < 20; ++offset) {
    for (size_t size = 0; size + offset <= 64; size += 3) {
      CHECK(pattern(42, offset, size) == std::vector<uint8_t>(whole.begin() + offset, whole.begin() + offset + size));
    }
  }
  CHECK(pattern(43, 0, 64) != whole);
}

TEST_CASE("data check: the checked form keeps the bytes and turns reductions into uint8 sums", "[phynet]") {
  WorkOp op = collective(OpKind::kReduceScatter, 1000);
  op.type = DataType::kBfloat16;
  op.reduce = ReduceKind::kMax;
  WorkOp checked = checkedForm(op);
  CHECK(checked.count == 2000);
  CHECK(checked.type == DataType::kUint8);
  CHECK(checked.reduce == ReduceKind::kSum);
}

TEST_CASE("data check: an allgather assembled from the members' buffers passes, one changed byte fails", "[phynet]") {
  const int n = 3;
  const size_t unit = 37;
  const WorkOp op = collective(OpKind::kAllGather, unit);
  std::vector<uint8_t> gathered;
  for (int r = 0; r < n; ++r) {
    DataCheck member(r, n);
    std::vector<uint8_t> send(unit);
    member.fillCollective(op, send.data());
    gathered.insert(gathered.end(), send.begin(), send.end());
  }
  DataCheck good(1, n);
  CHECK(good.checkCollective(op, gathered.data()).ok());
  CHECK(good.bytesChecked() == n * unit);
  gathered[unit * 2 + 5] ^= 0x10;
  DataCheck bad(1, n);
  Status status = bad.checkCollective(op, gathered.data());
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("rank 2") && Catch::Contains("byte 5 of 37"));
}

TEST_CASE("data check: an allreduce is the wrapping byte sum of every member, whatever the order", "[phynet]") {
  const int n = 5;
  const size_t count = 101;
  const WorkOp op = collective(OpKind::kAllReduce, count);
  std::vector<uint8_t> sum(count, 0);
  for (int r = n - 1; r >= 0; --r) {  // reverse order: the sum must not care
    DataCheck member(r, n);
    std::vector<uint8_t> send(count);
    member.fillCollective(op, send.data());
    for (size_t i = 0; i < count; ++i) sum[i] = static_cast<uint8_t>(sum[i] + send[i]);
  }
  CHECK(DataCheck(0, n).checkCollective(op, sum.data()).ok());
  sum[100] = static_cast<uint8_t>(sum[100] + 1);
  Status status = DataCheck(4, n).checkCollective(op, sum.data());
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("sum over every member") && Catch::Contains("byte 100 of 101"));
}

TEST_CASE("data check: messages over several check windows pass whole and name a wrong byte past the first window",
          "[phynet]") {
  // The expected bytes are built a window (1 MiB) at a time: every window must line up with the
  // pattern stream, and a wrong byte deep in the message is named by its place in the message.
  const int n = 3;
  const size_t count = (size_t{5} << 20) / 2 + 12345;  // two and a half windows and a bit
  const WorkOp op = collective(OpKind::kAllReduce, count);
  std::vector<uint8_t> sum(count, 0);
  for (int r = 0; r < n; ++r) {
    DataCheck member(r, n);
    std::vector<uint8_t> send(count);
    member.fillCollective(op, send.data());
    for (size_t i = 0; i < count; ++i) sum[i] = static_cast<uint8_t>(sum[i] + send[i]);
  }
  CHECK(DataCheck(1, n).checkCollective(op, sum.data()).ok());
  const size_t wrong = (size_t{2} << 20) + 777;
  sum[wrong] = static_cast<uint8_t>(sum[wrong] ^ 0x40);
  Status status = DataCheck(1, n).checkCollective(op, sum.data());
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains(fmt::format("byte {} of {}", wrong, count)));

  DataCheck sender(0, 2), receiver(1, 2);
  std::vector<uint8_t> message((size_t{3} << 20) + 5);
  sender.fillSend(1, message.data(), message.size());
  const uint64_t index = receiver.nextReceive(0);
  CHECK(receiver.checkReceive(0, index, message.data(), message.size()).ok());
  message[message.size() - 1] ^= 1;
  Status last = receiver.checkReceive(0, index, message.data(), message.size());
  REQUIRE_FALSE(last.ok());
  CHECK_THAT(last.message(), Catch::Contains(fmt::format("byte {} of {}", message.size() - 1, message.size())));
}

TEST_CASE("data check: the second message of a pair differs from the first, so stale data fails", "[phynet]") {
  DataCheck sender(0, 2), receiver(1, 2);
  std::vector<uint8_t> first(64), second(64);
  sender.fillSend(1, first.data(), first.size());
  sender.fillSend(1, second.data(), second.size());
  const uint64_t i0 = receiver.nextReceive(0), i1 = receiver.nextReceive(0);
  CHECK(receiver.checkReceive(0, i0, first.data(), first.size()).ok());
  Status stale = receiver.checkReceive(0, i1, first.data(), first.size());
  CHECK_FALSE(stale.ok());
  CHECK(receiver.checkReceive(0, i1, second.data(), second.size()).ok());
}

// The bytes an op delivers to `rank`: what --verify must have checked.
uint64_t deliveredBytes(const WorkOp& op, int rank, int nranks) {
  const uint64_t unit = op.count * dataTypeSize(op.type), n = static_cast<uint64_t>(nranks);
  switch (op.kind) {
    case OpKind::kAllGather:
    case OpKind::kAllToAll: return unit * n;
    case OpKind::kGather: return rank == op.root ? unit * n : 0;
    case OpKind::kReduce: return rank == op.root ? unit : 0;
    case OpKind::kSend: return 0;
    case OpKind::kRecv: return op.bytes;
    default: return unit;
  }
}

TEST_CASE("a verified replay of every op kind over in-process ranks checks every delivered byte", "[phynet]") {
  // 4 ranks: world {0..3}, pairs {0,1} {2,3} and {0,2} {1,3}; odd sizes, float and half types.
  Workload w;
  w.worldSize = 4;
  w.comms = {{1, {0, 1, 2, 3}, "world"}, {2, {0, 1}, "tp"}, {3, {2, 3}, "tp"}, {4, {0, 2}, "dp"}, {5, {1, 3}, "dp"}};
  w.ranks.resize(4);
  for (int g = 0; g < 4; ++g) {
    const uint64_t tp = g < 2 ? 2 : 3, dp = g % 2 == 0 ? 4 : 5;
    const int other = 1 - g / 2;
    auto add = [&](uint64_t comm, OpKind kind, uint64_t count, int nranks, int root = -1, int peer = -1,
                   int group = 0) {
      WorkOp op = collective(kind, count, root);
      op.commId = comm;
      op.type = count % 2 ? DataType::kFloat32 : DataType::kFloat16;
      op.reduce = ReduceKind::kMax;  // verified as a sum regardless
      op.peer = peer;
      op.group = group;
      op.bytes = opBytes(kind, count, op.type, nranks);
      w.ranks[g].ops.push_back(op);
    };
    w.ranks[g].globalRank = g;
    add(1, OpKind::kAllReduce, 4097, 4);
    add(tp, OpKind::kAllGather, 1001, 2);
    add(dp, OpKind::kReduceScatter, 2048, 2);
    add(1, OpKind::kBroadcast, 3001, 4, 2);
    add(1, OpKind::kAllToAll, 513, 4);
    add(dp, OpKind::kSend, 777, 2, -1, other, 7);
    add(dp, OpKind::kSend, 300, 2, -1, other, 7);
    add(dp, OpKind::kRecv, 777, 2, -1, other, 7);
    add(dp, OpKind::kRecv, 300, 2, -1, other, 7);
    add(1, OpKind::kReduce, 1001, 4, 1);
    add(1, OpKind::kGather, 65, 4, 0);
    add(1, OpKind::kScatter, 65, 4, 3);
    std::map<uint64_t, uint64_t> seq;
    for (WorkOp& op : w.ranks[g].ops) op.seq = seq[op.commId]++;
  }
  REQUIRE(checkWorkload(w).ok());
  const int iterations = 3;
  ReplayConfig config;
  config.iterations = iterations;
  config.stallSeconds = 30;
  config.verify = true;
  testing::InProcessReplay replay = testing::replayInThreads(w, config);
  for (const std::string& e : replay.errors) CHECK(e == "");
  std::vector<RankReplayResult>& results = replay.results;
  for (int g = 0; g < 4; ++g) {
    uint64_t expected = 0;
    for (const WorkOp& op : w.ranks[g].ops) {
      expected += deliveredBytes(op, commRankOf(*w.findComm(op.commId), g), w.findComm(op.commId)->members.size());
    }
    CHECK(results[g].counters.bytesVerified == expected * iterations);
  }
}

}  // namespace
}  // namespace nshim::phynet
