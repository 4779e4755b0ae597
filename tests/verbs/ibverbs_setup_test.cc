// Set-up errors of the ibverbs transport: each must say what is wrong and what exists instead —
// no device at all (runs on any machine without RDMA), a device name that matches nothing, a GID
// index that is not in the table, a peer whose device failed, and ranks that disagree about the
// number of QPs per peer.
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tests/verbs/verbs_test_util.h"
#include "transport/bootstrap/bootstrap.h"

namespace nshim {
namespace {

using testing::runRanksInProcesses;
using verbstest::contains;
using verbstest::testOptions;

std::string connectError(IbverbsOptions options) {
  auto id = createUniqueId();
  if (!id.ok()) return id.status().toString();
  auto transport = connectIbverbsTransport(*id, 0, 1, options);
  return transport.ok() ? "" : transport.status().message();
}

TEST_CASE("ibverbs: without an RDMA device the error says so and how to get one", "[ibverbs]") {
  if (!verbstest::rdmaDevices().empty()) NSHIM_SKIP_TEST("SKIPPED: this machine has an RDMA device");
  std::string error = connectError(testOptions());
  INFO(error);
  CHECK((contains(error, "no RDMA device found") || contains(error, "could not be loaded")));
  CHECK((contains(error, "rdma_rxe") || contains(error, "libibverbs")));
}

TEST_CASE("ibverbs: a device name that matches nothing lists the devices", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  IbverbsOptions options = testOptions();
  options.hca = "nosuchdev9";
  std::string error = connectError(options);
  INFO(error);
  CHECK(contains(error, "NCCLSHIM_IB_HCA=nosuchdev9 matches no RDMA device"));
  std::string first = verbstest::rdmaDevices().substr(0, verbstest::rdmaDevices().find(','));
  CHECK(contains(error, first + " port 1"));
}

TEST_CASE("ibverbs: a GID index outside the table lists the GIDs", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  IbverbsOptions options = testOptions();
  options.gidIndex = 77;
  std::string error = connectError(options);
  INFO(error);
  CHECK(contains(error, "NCCLSHIM_IB_GID_INDEX=77 is not a valid GID"));
  CHECK(contains(error, "RoCE v2"));
  CHECK(contains(error, "[0]"));
}

TEST_CASE("ibverbs: the automatic GID is RoCE v2 and IPv4-mapped, or the rank's address", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  IbverbsOptions options = testOptions();
  options.gidIndex = -1;
  CHECK(connectError(options).empty());
  auto chosen = queryIbverbsPort(options);
  REQUIRE(chosen.ok());
  INFO(chosen->device << " port " << chosen->port << " GID [" << chosen->gidIndex << "] " << chosen->gid);
  CHECK(chosen->gid.rfind("::ffff:", 0) == 0);  // IPv4-mapped (never the link-local fe80:: entry)
  CHECK(chosen->mtu >= 256);
  // Given the address of that GID as the rank's own, the same GID is chosen by address.
  IbverbsOptions anyDevice = options;
  anyDevice.hca = "";  // the device is then chosen by address
  auto byAddress = queryIbverbsPort(anyDevice, chosen->gid.substr(7));
  REQUIRE(byAddress.ok());
  CHECK(byAddress->gidIndex == chosen->gidIndex);
  CHECK(byAddress->device == chosen->device);
}

TEST_CASE("ibverbs: a rank whose device fails is named by its peer", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto created = createUniqueId();
  REQUIRE(created.ok());
  UniqueId id = *created;
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        IbverbsOptions options = testOptions();
        options.timeoutSeconds = 10;
        if (rank == 1) options.hca = "nosuchdev9";
        auto connected = connectIbverbsTransport(id, rank, 2, options);
        if (connected.ok()) return "connected despite a bad device";
        const std::string& error = connected.status().message();
        const char* expected = rank == 1 ? "matches no RDMA device" : "QP endpoints of rank 1";
        return contains(error, expected) ? "" : "unexpected error: " + error;
      },
      60);
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("ibverbs: ranks that disagree about QPs per peer are told which setting", "[ibverbs]") {
  NSHIM_REQUIRE_RDMA();
  auto created = createUniqueId();
  REQUIRE(created.ok());
  UniqueId id = *created;
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        IbverbsOptions options = testOptions(rank == 0 ? 1 : 2);
        options.timeoutSeconds = 10;
        auto connected = connectIbverbsTransport(id, rank, 2, options);
        if (connected.ok()) return "connected despite different QP counts";
        const std::string& error = connected.status().message();
        return contains(error, "NCCLSHIM_IB_QPS_PER_PEER") ? "" : "unexpected error: " + error;
      },
      60);
  CHECK(codes == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace nshim
