// NCCL's Socket-transport model in the TCP transport: how NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD,
// NCCL_SOCKET_MIN_TASKSIZE and the NIC's vendor resolve (nccl_socket_settings.h), and messages cut
// into tasks over a connection's data sockets arriving intact, on the sockets NCCL would use; the
// helper threads that move them (socket_helper.h) end every wait when a peer dies or on abort.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectives/abort_on_error.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "tests/transport/shared_transport_checks.h"
#include "tests/transport/tcp_test_util.h"
#include "transport/tcp/nccl_socket_settings.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {
namespace {

using namespace tcptest;
using testing::runRanksInProcesses;

NcclVariableLookup lookupOf(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// Removes the fake /sys/class/net trees when the test program ends.
struct FakeTrees {
  std::vector<std::string> roots;
  ~FakeTrees() {
    for (const std::string& root : roots) std::filesystem::remove_all(root);
  }
};

// A fake /sys/class/net with one interface `name` whose PCI vendor is `vendor` ("" for none).
std::string fakeSysClassNet(const std::string& name, const std::string& vendor) {
  static int counter = 0;
  static FakeTrees trees;
  std::string root = fmt::format("/tmp/ncclshim-sysnet-{}-{}", getpid(), counter++);
  REQUIRE(::mkdir(root.c_str(), 0700) == 0);
  trees.roots.push_back(root);
  ::mkdir((root + "/" + name).c_str(), 0700);
  if (!vendor.empty()) {
    ::mkdir((root + "/" + name + "/device").c_str(), 0700);
    std::ofstream(root + "/" + name + "/device/vendor") << vendor << "\n";
  }
  return root;
}

NcclSocketSettings mustRead(const NcclVariableLookup& lookup, const std::string& nic, const std::string& root) {
  auto settings = readNcclSocketSettings(lookup, nic, root);
  INFO(settings.status().toString());
  REQUIRE(settings.ok());
  return *settings;
}

TEST_CASE("NCCL's socket threads and sockets resolve as NCCL resolves them", "[tcp][nccl_socket]") {
  const auto none = lookupOf({});
  SECTION("loopback or an ordinary NIC: no data sockets, buffers left to the kernel") {
    NcclSocketSettings s = mustRead(none, "lo", fakeSysClassNet("lo", ""));
    CHECK(s.dataSockets() == 0);
    CHECK(s.socketsPerConnection() == 1);
    CHECK(s.sendBufferBytes == -1);
    CHECK(s.recvBufferBytes == -1);
    CHECK(mustRead(none, "eth0", fakeSysClassNet("eth0", "0x15b3")).dataSockets() == 0);
  }
  SECTION("by the NIC's vendor: AWS 2 x 8, Google Cloud 4 x 1") {
    NcclSocketSettings aws = mustRead(none, "ens5", fakeSysClassNet("ens5", "0x1d0f"));
    CHECK(aws.threads == 2);
    CHECK(aws.socketsPerThread == 8);
    CHECK(aws.dataSockets() == 16);
    CHECK(mustRead(none, "ens4", fakeSysClassNet("ens4", "0x1ae0")).dataSockets() == 4);
    // One of the two set: the other still comes from the vendor.
    CHECK(
        mustRead(lookupOf({{"NCCL_SOCKET_NTHREADS", "1"}}), "ens5", fakeSysClassNet("ens5", "0x1d0f")).dataSockets() ==
        8);
  }
  SECTION("set: their product, capped as NCCL caps it") {
    const std::string root = fakeSysClassNet("lo", "");
    CHECK(
        mustRead(lookupOf({{"NCCL_SOCKET_NTHREADS", "2"}, {"NCCL_NSOCKS_PERTHREAD", "3"}}), "lo", root).dataSockets() ==
        6);
    NcclSocketSettings many =
        mustRead(lookupOf({{"NCCL_SOCKET_NTHREADS", "40"}, {"NCCL_NSOCKS_PERTHREAD", "1"}}), "lo", root);
    CHECK(many.threads == 16);
    NcclSocketSettings wide =
        mustRead(lookupOf({{"NCCL_SOCKET_NTHREADS", "8"}, {"NCCL_NSOCKS_PERTHREAD", "16"}}), "lo", root);
    CHECK(wide.dataSockets() == 64);
    NcclSocketSettings sized = mustRead(
        lookupOf({{"NCCL_SOCKET_MIN_TASKSIZE", "128K"}, {"NCCL_SOCKET_SNDBUF", "4M"}, {"NCCL_SOCKET_RCVBUF", "-1"}}),
        "lo", root);
    CHECK(sized.minTaskBytes == 128u << 10);
    CHECK(sized.sendBufferBytes == 4 << 20);
    CHECK(sized.recvBufferBytes == -1);
  }
  SECTION("a malformed value is an error naming the variable") {
    const std::string root = fakeSysClassNet("lo", "");
    for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{{"NCCL_SOCKET_NTHREADS", "two"},
                                                                               {"NCCL_NSOCKS_PERTHREAD", "-5"},
                                                                               {"NCCL_SOCKET_MIN_TASKSIZE", "0"},
                                                                               {"NCCL_SOCKET_SNDBUF", "lots"}}) {
      auto settings = readNcclSocketSettings(lookupOf({{name, value}}), "lo", root);
      INFO(name << "=" << value);
      REQUIRE_FALSE(settings.ok());
      CHECK(contains(settings.status().message(), name + "=" + value));
    }
  }
}

TEST_CASE("a message is cut into NCCL's tasks: at least the minimum, one per data socket", "[tcp][nccl_socket]") {
  NcclSocketSettings s;
  s.threads = 2;
  s.socketsPerThread = 2;         // 4 data sockets, tasks of at least 64 KiB
  CHECK(s.onControlSocket(128));  // inline
  CHECK_FALSE(s.onControlSocket(129));
  CHECK(s.taskCount(129) == 1);
  CHECK(s.taskBytes(100 << 10) == 64u << 10);
  CHECK(s.taskCount(100 << 10) == 2);
  CHECK(s.taskBytes((1 << 20) + 3) == (1u << 18) + 1);
  CHECK(s.taskCount((1 << 20) + 3) == 4);
  s.threads = 0;  // no data sockets: the control socket carries everything
  CHECK(s.onControlSocket(64 << 20));
  CHECK(s.taskCount(64 << 20) == 1);
}

// Two ranks, 2 connections of 1 control + 3 data sockets each: messages of every size both ways
// in rounds (the deal of tasks continues across messages), every byte and counter checked; then a
// 1 MiB message on channel 1 only uses that connection's control socket and its 3 data sockets.
std::string dataSocketJob(const UniqueId& id, int rank) {
  TcpOptions options = testOptions(20, 2);
  options.ncclVariables = lookupOf({{"NCCL_SOCKET_NTHREADS", "3"}, {"NCCL_NSOCKS_PERTHREAD", "1"}});
  auto connected = connectTcpTransport(id, rank, 2, options);
  if (!connected.ok()) return connected.status().toString();
  Transport& t = **connected;
  ExpectedBytes expected(2);
  const size_t sizes[] = {0, 1, 128, 129, 70000, (1 << 20) + 3, 200 << 10};
  int msg = 0;
  std::string error = exchangeRounds(t, sizes, 3, Deadline::after(30), expected, &msg);
  if (!error.empty()) return error;
  if (std::string counters = checkByteCounters(t, expected); !counters.empty()) return counters;
  if (t.peerBytes(1 - rank).sendLinks != 8) {
    return fmt::format("{} sockets carried sends, want 8 (2 connections x 4)", t.peerBytes(1 - rank).sendLinks);
  }
  return "";
}

TEST_CASE("messages cut over data sockets arrive intact", "[tcp][nccl_socket]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2, [&](int rank) { return dataSocketJob(id, rank); }, 60);
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("ranks with different NCCL data sockets are told so at connection", "[tcp][nccl_socket]") {
  UniqueId id = mustCreateId();
  auto codes = runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        TcpOptions options = testOptions(10, 2);
        options.ncclVariables = lookupOf({{"NCCL_SOCKET_NTHREADS", rank == 0 ? "2" : "0"}});
        auto connected = connectTcpTransport(id, rank, 2, options);
        if (connected.ok()) return "connected despite different socket counts";
        return contains(connected.status().message(), "same value on every rank") ? "" : connected.status().toString();
      },
      30);
  CHECK(codes == std::vector<int>{0, 0});
}

// With data sockets their tasks move on NCCL's helper threads (2 threads x 2 sockets here): a
// peer's loss and an abort must still end every wait at once and name the rank.
TcpOptions helperOptions() {
  TcpOptions options = testOptions();
  options.ncclVariables = lookupOf({{"NCCL_SOCKET_NTHREADS", "2"}, {"NCCL_NSOCKS_PERTHREAD", "2"}});
  return options;
}

TEST_CASE("data sockets: a rank killed mid-transfer is named by the survivors", "[tcp][nccl_socket]") {
  UniqueId id = mustCreateId();
  constexpr size_t kBig = 16 << 20;  // more than the socket buffers hold: tasks are in flight
  auto codes = runRanksInProcesses(
      3,
      [&](int rank) -> std::string {
        auto connected = connectTcpTransport(id, rank, 3, helperOptions());
        if (!connected.ok()) return connected.status().toString();
        return killedHubJob(**connected, kBig, 50, 3, 5);
      },
      60);
  CHECK(codes == std::vector<int>{0, 0, 128 + SIGKILL});
}

// Ranks as threads of this process (so that a thread sanitizer sees every thread involved).
TEST_CASE("data sockets: abort from another thread wakes the waiter and the peer notices", "[tcp][nccl_socket]") {
  UniqueId id = mustCreateId();
  auto results = testing::runRanksInThreads(2, [&](int rank) -> std::string {
    auto connected = connectTcpTransport(id, rank, 2, helperOptions());
    if (!connected.ok()) return connected.status().toString();
    return abortFromAnotherThread(**connected, (1 << 20) + 3);
  });
  CHECK(results == std::vector<std::string>{"", ""});
}

}  // namespace
}  // namespace nshim
