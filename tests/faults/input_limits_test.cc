// Regression tests of what the fuzz suite (tests/suites/fuzz_tests.sh) found, and of the parsing it
// needed factored out of the sockets: SimAI / AICB layouts whose group sizes multiplied past int64
// (undefined behaviour) or were cut to int are refused naming the field and the limit; a root
// beyond int is refused and compute times saturate instead of overflowing; the root's reply to a
// rank is checked against the job before a payload of the announced length is read.
#include <string>

#include "tests/catch.h"
#include "transport/bootstrap/bootstrap_messages.h"
#include "workload/aicb_workload.h"
#include "workload/rank_layout.h"
#include "workload/simai_workload.h"

namespace nshim {
namespace {

using workload::WorkloadOptions;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kLayer = "l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4096 1\n";
const std::string kAicbHeader = "comm_type,comm_group,comm_group_size,msg_size\n";

TEST_CASE("SimAI worlds beyond the largest one are refused before any product of sizes", "[phynet]") {
  auto overflow = workload::parseSimAiWorkload(
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 4294967296 pp: 4294967296 all_gpus: 9223372036854775807\n1\n" +
          kLayer,
      "x.txt", WorkloadOptions{});
  REQUIRE_FALSE(overflow.ok());
  CHECK(contains(overflow.status().message(),
                 "x.txt:1: all_gpus: 9223372036854775807 ranks are more than phynet replays (at most 65536)"));

  auto truncated = workload::parseSimAiWorkload(
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 4294967298\n1\n" + kLayer, "x.txt", WorkloadOptions{});
  REQUIRE_FALSE(truncated.ok());
  CHECK(contains(truncated.status().message(), "x.txt:1: all_gpus: 4294967298 ranks are more than phynet replays"));

  WorkloadOptions options;
  options.worldSize = 70000;
  auto option = workload::parseSimAiWorkload("DATA all_gpus: 8\n1\n" + kLayer, "x.txt", options);
  REQUIRE_FALSE(option.ok());
  CHECK(contains(option.status().message(), "x.txt: option worldSize: 70000 ranks are more than phynet replays"));

  WorkloadOptions small;
  small.maxWorldSize = 16;
  CHECK(workload::parseSimAiWorkload("DATA all_gpus: 16\n1\n" + kLayer, "x.txt", small).ok());
  CHECK_FALSE(workload::parseSimAiWorkload("DATA all_gpus: 32\n1\n" + kLayer, "x.txt", small).ok());
}

TEST_CASE("AICB group sizes beyond the largest world are refused before any product of sizes", "[phynet]") {
  auto overflow = workload::parseAicbWorkload(kAicbHeader +
                                                  "CommType.all_reduce,CommGroup.tp_group,3037000500,4096\n"
                                                  "CommType.all_reduce,CommGroup.dp_group,3037000500,4096\n",
                                              "x.csv", WorkloadOptions{});
  REQUIRE_FALSE(overflow.ok());
  CHECK(contains(overflow.status().message(),
                 "x.csv:2: comm_group_size: tp_group of 3037000500 ranks is more than phynet replays (at most 65536)"));

  auto product = workload::parseAicbWorkload(kAicbHeader +
                                                 "CommType.all_reduce,CommGroup.tp_group,256,4096\n"
                                                 "CommType.all_reduce,CommGroup.dp_group,512,4096\n",
                                             "x.csv", WorkloadOptions{});
  REQUIRE_FALSE(product.ok());
  CHECK(contains(product.status().message(), "TP*DP*PP = 131072 ranks are more than phynet replays (at most 65536)"));

  auto dpEp = workload::parseAicbWorkload(kAicbHeader +
                                              "CommType.all_reduce,CommGroup.ep_group,2,4096\n"
                                              "CommType.all_reduce,CommGroup.ep_dp_group,1000000000000000,4096\n",
                                          "x.csv", WorkloadOptions{});
  REQUIRE_FALSE(dpEp.ok());
  CHECK(contains(dpEp.status().message(), "x.csv:3: comm_group_size: dp_ep_group of"));
}

TEST_CASE("huge roots and compute times from a file are refused or saturate, never overflow", "[phynet]") {
  auto root = workload::parseAicbWorkload(
      "comm_type,comm_group,comm_group_size,msg_size,src\n"
      "CommType.broadcast,CommGroup.tp_group,2,128,1e30\n",
      "x.csv", WorkloadOptions{});
  REQUIRE_FALSE(root.ok());
  CHECK(contains(root.status().message(), "x.csv:2: src: root 1e+30 is not a rank of a group"));

  // Two layers of 9e18 ns of compute before the first op: the sum saturates at INT64_MAX.
  auto compute = workload::parseSimAiWorkload(
      "DATA all_gpus: 2\n2\n"
      "a -1 9e18 NONE 0 9e18 NONE 0 1 ALLREDUCE 4096 1\n"
      "b -1 9e18 NONE 0 9e18 NONE 0 1 ALLREDUCE 4096 1\n",
      "x.txt", WorkloadOptions{});
  REQUIRE(compute.ok());
  REQUIRE_FALSE(compute->ranks[0].ops.empty());
  CHECK(compute->ranks[0].ops[0].computeNs == INT64_MAX);
  CHECK(workload::roundNs(1e300) == INT64_MAX);
  CHECK(workload::roundNs(-5) == 0);
  CHECK(workload::roundNs(1.6) == 2);
}

TEST_CASE("the root's reply is checked against the job before its payload is read", "[tcp]") {
  using namespace bootstrap;
  auto table = checkRootReply(RootReplyHeader{kRootTable, 0, 4, 4 * SocketAddress::kWireBytes}, 4);
  REQUIRE(table.ok());
  CHECK(*table == 4 * SocketAddress::kWireBytes);
  auto huge = checkRootReply(RootReplyHeader{kRootTable, 0, 4, 0xFFFFFFFFu}, 4);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message() == "a malformed table (kind 2, 4 ranks, 4294967295 bytes)");
  CHECK_FALSE(checkRootReply(RootReplyHeader{kRootTable, 0, 5, 5 * SocketAddress::kWireBytes}, 4).ok());
  CHECK_FALSE(checkRootReply(RootReplyHeader{7, 0, 4, 4 * SocketAddress::kWireBytes}, 4).ok());
  auto error = checkRootReply(RootReplyHeader{kRootError, 6, 4, 100}, 4);
  REQUIRE(error.ok());
  CHECK(*error == 100);
  auto oversized = checkRootReply(RootReplyHeader{kRootError, 6, 4, kMaxErrorText + 1}, 4);
  REQUIRE_FALSE(oversized.ok());
  CHECK(oversized.status().message() == "an oversized error (4097 bytes, at most 4096)");

  uint8_t payload[2 * SocketAddress::kWireBytes] = {};
  auto loopback = SocketAddress::parse("127.0.0.1", 4000);
  REQUIRE(loopback.ok());
  loopback->toWire(payload);
  loopback->toWire(payload + SocketAddress::kWireBytes);
  auto addresses = decodeRootTable(payload, sizeof(payload), 2);
  REQUIRE(addresses.ok());
  CHECK(addresses->at(1).toString() == "127.0.0.1:4000");
  CHECK_FALSE(decodeRootTable(payload, sizeof(payload) - 1, 2).ok());
  payload[SocketAddress::kWireBytes + 1] = 9;  // rank 1's family
  auto bad = decodeRootTable(payload, sizeof(payload), 2);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "a bad address for rank 1");
}

}  // namespace
}  // namespace nshim
