// The collective descriptors against nccl-tests' conventions written out by hand (buffers, size,
// busbw factor), NCCL's ncclFunc_t numbering, and the trace's op codes, whose names must be the
// descriptors' names.
#include "common/collective_descriptor.h"

#include <string>

#include "tests/catch.h"
#include "trace/trace_format.h"
#include "trace/trace_record.h"

namespace nshim {
namespace {

TEST_CASE("collective descriptors: nccl-tests' buffers, size and busbw factor for 4 ranks", "[common]") {
  struct Expected {
    CollectiveKind kind;
    uint64_t sendBlocks, recvBlocks, sizeBlocks;
    double busFactor;
  };
  const Expected expected[] = {
      {CollectiveKind::kAllReduce, 1, 1, 1, 1.5},      {CollectiveKind::kAllGather, 1, 4, 4, 0.75},
      {CollectiveKind::kReduceScatter, 4, 1, 4, 0.75}, {CollectiveKind::kBroadcast, 1, 1, 1, 1.0},
      {CollectiveKind::kReduce, 1, 1, 1, 1.0},         {CollectiveKind::kAllToAll, 4, 4, 4, 0.75},
      {CollectiveKind::kGather, 1, 4, 4, 0.75},        {CollectiveKind::kScatter, 4, 1, 4, 0.75},
      {CollectiveKind::kSend, 1, 1, 1, 1.0},           {CollectiveKind::kRecv, 1, 1, 1, 1.0},
  };
  for (const Expected& e : expected) {
    const CollectiveDescriptor& d = describe(e.kind);
    INFO(d.name);
    CHECK(blockCount(d.sendBlocks, 4) == e.sendBlocks);
    CHECK(blockCount(d.recvBlocks, 4) == e.recvBlocks);
    CHECK(sizeBlocks(d, 4) == e.sizeBlocks);
    CHECK(busBandwidthFactor(d, 4) == e.busFactor);
    const CollectiveShape shape = shapeOfTotal(d, 4096, 4);
    CHECK(shape.count == 4096 / e.sizeBlocks);
    CHECK(shape.sendElems == shape.count * e.sendBlocks);
    CHECK(shape.recvElems == shape.count * e.recvBlocks);
  }
  CHECK(busBandwidthFactor(describe(CollectiveKind::kAllReduce), 1) == 0.0);
  CHECK(busBandwidthFactor(describe(CollectiveKind::kBroadcast), 1) == 1.0);
}

TEST_CASE("collective descriptors: names, arguments and NCCL's function numbers", "[common]") {
  CHECK(std::string(describe(CollectiveKind::kAllReduce).ncclTestsName) == "all_reduce");
  CHECK(findByNcclTestsName("reduce_scatter") == &describe(CollectiveKind::kReduceScatter));
  CHECK(findByNcclTestsName("sendrecv") == &describe(CollectiveKind::kSend));
  CHECK(findByNcclTestsName("allreduce") == nullptr);
  CHECK(describe(CollectiveKind::kReduce).reduces);
  CHECK(describe(CollectiveKind::kReduce).rooted);
  CHECK_FALSE(describe(CollectiveKind::kAllGather).reduces);
  CHECK(describe(CollectiveKind::kRecv).pointToPoint);
  // ncclFunc_t: Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4.
  CHECK(describe(CollectiveKind::kBroadcast).ncclFunc == 0);
  CHECK(describe(CollectiveKind::kAllReduce).ncclFunc == 4);
  CHECK(describe(CollectiveKind::kAllToAll).ncclFunc == -1);
}

TEST_CASE("trace op codes map to the collective of the same name; groups to none", "[common][trace]") {
  for (int code = 0; code < trace::kNumOpCodes; ++code) {
    const auto op = static_cast<trace::OpCode>(code);
    CollectiveKind kind;
    if (op == trace::OpCode::kGroupStart || op == trace::OpCode::kGroupEnd) {
      CHECK_FALSE(trace::collectiveOf(op, &kind));
      continue;
    }
    REQUIRE(trace::collectiveOf(op, &kind));
    CHECK(std::string(trace::opName(op)) == describe(kind).name);
  }
  CHECK(trace::traceBytes(trace::OpCode::kAllGather, 10, 7, 4) == 160);  // float32, 4 ranks
  CHECK(trace::traceBytes(trace::OpCode::kGroupEnd, 10, 7, 4) == 0);
}

}  // namespace
}  // namespace nshim
