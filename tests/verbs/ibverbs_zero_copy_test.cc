// Tests of the ibverbs transport's zero copy (transport/ibverbs/ibverbs_zero_copy.cc) with ranks as forked
// processes on one RDMA device: messages around the zero-copy size with every combination of
// registered and plain buffers on the two ends, both ways at once, every byte checked and the
// receiver's zero-copy counter exact; ring collectives on registered buffers; registration errors
// (and one still in use); ranks that disagree about a message's size or the zero-copy size. Every
// test skips without an RDMA device.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "collectives/collectives.h"
#include "tests/test_util.h"
#include "tests/transport/tcp_test_util.h"
#include "tests/verbs/verbs_test_util.h"
#include "transport/bootstrap/bootstrap.h"

namespace nshim {
namespace {

using tcptest::pattern;
using tcptest::verify;
using testing::runRanksInProcesses;
using verbstest::contains;
using verbstest::testOptions;

constexpr size_t kZeroCopyMin = 64 << 10;
const size_t kSizes[] = {1000, kZeroCopyMin - 1, kZeroCopyMin, (1 << 20) + 3, (5 << 20) + 1};

std::vector<int> runJob(int nranks, const std::function<std::string(const UniqueId&, int)>& job) {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = *id;
  return runRanksInProcesses(
      nranks, [&](int rank) { return job(uid, rank); }, 180);
}

// The test options with zero copy from kZeroCopyMin (whatever the environment says).
Result<std::unique_ptr<Transport>> connectWithZeroCopy(const UniqueId& id, int rank, int nranks, int postThread = -1) {
  IbverbsOptions options = testOptions();
  options.zeroCopyMin = kZeroCopyMin;
  options.postThread = postThread;
  return connectIbverbsTransport(id, rank, nranks, options);
}

// Rank r sends every size to the other rank and receives every size from it, all posted at once,
// with its sends registered when `registerSends` and its receives when `registerRecvs`.
std::string exchangeAllSizes(Transport& t, bool registerSends, bool registerRecvs, int round) {
  const int peer = 1 - t.rank();
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<MemoryRegistration> registrations;
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    out.push_back(pattern(kSizes[i], t.rank(), peer, round * 16 + static_cast<int>(i)));
    in.emplace_back(kSizes[i], 0);
  }
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    for (auto [on, buf] : {std::pair{registerSends, &out[i]}, std::pair{registerRecvs, &in[i]}}) {
      if (!on) continue;
      auto registration = MemoryRegistration::create(t, buf->data(), buf->size());
      if (!registration.ok()) return registration.status().toString();
      registrations.push_back(std::move(registration).value());
    }
  }
  std::vector<Request> sends(std::size(kSizes)), recvs(std::size(kSizes));
  std::vector<Request*> all;
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    Status posted = t.postRecv(peer, 7 + i, in[i].data(), in[i].size(), &recvs[i]);
    if (posted.ok()) posted = t.postSend(peer, 7 + i, out[i].data(), out[i].size(), &sends[i]);
    if (!posted.ok()) return posted.toString();
    all.push_back(&recvs[i]);
    all.push_back(&sends[i]);
  }
  Status waited = t.waitAll(all, Deadline::after(60));
  if (!waited.ok()) return waited.toString();
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    std::string bad = verify(in[i], peer, t.rank(), round * 16 + static_cast<int>(i));
    if (!bad.empty()) return fmt::format("message of {} bytes: {}", kSizes[i], bad);
  }
  return "";
}

TEST_CASE("ibverbs zero copy: every mix of registered and plain buffers, every byte, exact counters",
          "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  for (int postThread : {1, 0}) {
    auto codes = runJob(2, [&](const UniqueId& id, int rank) -> std::string {
      auto connected = connectWithZeroCopy(id, rank, 2, postThread);
      if (!connected.ok()) return connected.status().toString();
      Transport& t = **connected;
      int round = 0;
      for (bool registerSends : {false, true}) {
        for (bool registerRecvs : {false, true}) {
          // Both ranks register alike, so what rank r sends registered, the other receives as set.
          PeerBytes before = t.peerBytes(1 - rank);
          std::string error = exchangeAllSizes(t, registerSends, registerRecvs, round++);
          if (!error.empty()) return error;
          PeerBytes after = t.peerBytes(1 - rank);
          uint64_t total = 0, large = 0;
          for (size_t bytes : kSizes) {
            total += bytes;
            if (bytes >= kZeroCopyMin) large += bytes;
          }
          uint64_t expectedZeroCopy = registerSends && registerRecvs ? large : 0;
          if (after.received - before.received != total || after.sent - before.sent != total ||
              after.receivedZeroCopy - before.receivedZeroCopy != expectedZeroCopy) {
            return fmt::format(
                "sends registered {}, receives registered {}: sent {}, received {} ({} zero-copy); "
                "expected {} each way, {} zero-copy",
                registerSends, registerRecvs, after.sent - before.sent, after.received - before.received,
                after.receivedZeroCopy - before.receivedZeroCopy, total, expectedZeroCopy);
          }
        }
      }
      return "";
    });
    INFO("post thread " << postThread << " (rank errors are on stderr above)");
    CHECK(codes == std::vector<int>{0, 0});
  }
}

// Allreduce (ring), allgather and reduce-scatter of int32 on registered buffers: exact results, and
// the staged and final receives arrive zero-copy.
TEST_CASE("ibverbs zero copy: ring collectives on registered buffers are exact", "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  for (int nranks : {2, 3}) {
    auto codes = runJob(nranks, [&](const UniqueId& id, int rank) -> std::string {
      auto connected = connectWithZeroCopy(id, rank, nranks);
      if (!connected.ok()) return connected.status().toString();
      CollectiveOptions collective = CollectiveOptions::fromEnvironment();
      collective.smallAllReduceBytes = 0;
      Communicator comm(std::move(connected).value(), collective);
      const size_t count = (size_t{3} << 20) / 4 + 5;  // 3 MiB of int32 and a ragged end
      std::vector<int32_t> in(count), out(count * nranks);
      for (size_t i = 0; i < count; ++i) in[i] = static_cast<int32_t>((i * 7 + rank * 1000003) % 100000);
      std::vector<MemoryRegistration> registrations;
      for (auto [buf, bytes] : {std::pair{in.data(), count * 4}, std::pair{out.data(), count * nranks * 4}}) {
        auto registration = MemoryRegistration::create(comm.transport(), buf, bytes);
        if (!registration.ok()) return registration.status().toString();
        registrations.push_back(std::move(registration).value());
      }
      auto expectedSum = [&](size_t i) {
        int64_t sum = 0;
        for (int r = 0; r < nranks; ++r) sum += static_cast<int64_t>((i * 7 + r * 1000003) % 100000);
        return static_cast<int32_t>(sum);
      };
      auto zeroCopied = [&] {
        uint64_t bytes = 0;
        for (int p = 0; p < nranks; ++p) bytes += p == rank ? 0 : comm.transport().peerBytes(p).receivedZeroCopy;
        return bytes;
      };
      Status status = allReduce(comm, in.data(), out.data(), count, DataType::kInt32, ReduceOp{});
      if (!status.ok()) return status.toString();
      for (size_t i = 0; i < count; ++i) {
        if (out[i] != expectedSum(i)) return fmt::format("allreduce element {}: {} != {}", i, out[i], expectedSum(i));
      }
      uint64_t afterAllReduce = zeroCopied();
      if (afterAllReduce == 0) return "the allreduce received nothing zero-copy";
      status = allGather(comm, in.data(), out.data(), count, DataType::kInt32);
      if (!status.ok()) return status.toString();
      for (int r = 0; r < nranks; ++r) {
        for (size_t i = 0; i < count; ++i) {
          int32_t want = static_cast<int32_t>((i * 7 + r * 1000003) % 100000);
          if (out[r * count + i] != want) return fmt::format("allgather block {} element {}", r, i);
        }
      }
      if (zeroCopied() == afterAllReduce) return "the allgather received nothing zero-copy";
      const size_t part = count / nranks;
      status = reduceScatter(comm, in.data(), out.data(), part, DataType::kInt32, ReduceOp{});
      if (!status.ok()) return status.toString();
      for (size_t i = 0; i < part; ++i) {
        if (out[i] != expectedSum(rank * part + i)) return fmt::format("reduce-scatter element {}", i);
      }
      return "";
    });
    INFO(nranks << " ranks (rank errors are on stderr above)");
    CHECK(codes == std::vector<int>(nranks, 0));
  }
}

TEST_CASE("ibverbs zero copy: bad registrations are refused with a clear error", "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  auto codes = runJob(2, [&](const UniqueId& id, int rank) -> std::string {
    auto connected = connectIbverbsTransport(id, rank, 2, testOptions());
    if (!connected.ok()) return connected.status().toString();
    Transport& t = **connected;
    std::vector<char> buf(1 << 20);
    Status null = t.registerMemory(nullptr, 10);
    if (null.ok() || !contains(null.message(), "cannot register")) return "null buffer: " + null.toString();
    Status first = t.registerMemory(buf.data(), buf.size());
    if (!first.ok()) return first.toString();
    Status overlap = t.registerMemory(buf.data() + 4096, 4096);
    if (overlap.ok() || !contains(overlap.message(), "overlaps")) return "overlap: " + overlap.toString();
    Status unknown = t.deregisterMemory(buf.data() + 1);
    if (unknown.ok() || !contains(unknown.message(), "no registration starts")) return "unknown: " + unknown.toString();
    Status done = t.deregisterMemory(buf.data());
    if (!done.ok()) return done.toString();
    // ibv_reg_mr runs outside the transport's lock: of 4 threads registering overlapping ranges at
    // once, exactly one succeeds and the others are told of the overlap.
    std::vector<char> big(16 << 20);
    std::vector<Status> racing(4);
    std::vector<std::thread> threads;
    std::atomic<size_t> ready{0};
    for (size_t i = 0; i < racing.size(); ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < racing.size()) std::this_thread::yield();  // start together
        racing[i] = t.registerMemory(big.data() + i * 4096, big.size() - 4 * 4096);
      });
    }
    for (std::thread& thread : threads) thread.join();
    int winners = 0;
    for (size_t i = 0; i < racing.size(); ++i) {
      if (racing[i].ok()) {
        ++winners;
        if (Status end = t.deregisterMemory(big.data() + i * 4096); !end.ok()) return end.toString();
      } else if (!contains(racing[i].message(), "overlaps")) {
        return "racing registration: " + racing[i].toString();
      }
    }
    return winners == 1 ? "" : fmt::format("{} of 4 overlapping registrations succeeded", winners);
  });
  CHECK(codes == std::vector<int>{0, 0});
}

// Rank 0 posts a registered send that waits for rank 1's offer (rank 1 posts its receive 0.3 s
// later): ending the registration meanwhile is refused, and allowed once the send is done.
TEST_CASE("ibverbs zero copy: a registration in use cannot be ended", "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  auto codes = runJob(2, [&](const UniqueId& id, int rank) -> std::string {
    auto connected = connectWithZeroCopy(id, rank, 2);
    if (!connected.ok()) return connected.status().toString();
    Transport& t = **connected;
    std::vector<uint8_t> buf = rank == 0 ? pattern(1 << 20, 0, 1, 3) : std::vector<uint8_t>(1 << 20, 0);
    Status status = t.registerMemory(buf.data(), buf.size());
    if (!status.ok()) return status.toString();
    Request req;
    if (rank == 1) {
      usleep(300'000);
      status = t.postRecv(0, 9, buf.data(), buf.size(), &req);
      if (status.ok()) status = waitOne(t, &req, Deadline::after(20));
      if (status.ok() && t.peerBytes(0).receivedZeroCopy != buf.size()) return "the message did not go zero-copy";
      if (status.ok()) status = t.deregisterMemory(buf.data());
      return status.ok() ? verify(buf, 0, 1, 3) : status.toString();
    }
    status = t.postSend(1, 9, buf.data(), buf.size(), &req);
    if (!status.ok()) return status.toString();
    Status early = t.deregisterMemory(buf.data());
    if (early.ok() || !contains(early.message(), "still in use"))
      return "deregistered while in use: " + early.toString();
    status = waitOne(t, &req, Deadline::after(20));
    if (status.ok()) status = t.deregisterMemory(buf.data());
    return status.ok() ? "" : status.toString();
  });
  CHECK(codes == std::vector<int>{0, 0});
}

// Rank 0 sends 1 MiB from a registered buffer; rank 1 expects 1000 bytes (too small for an offer).
// Rank 0 stops waiting for the offer and sends through the ring, and rank 1's header check names the
// disagreement (no timeout).
TEST_CASE("ibverbs zero copy: a size disagreement is reported, not waited out", "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  auto codes = runJob(2, [&](const UniqueId& id, int rank) -> std::string {
    auto connected = connectWithZeroCopy(id, rank, 2);
    if (!connected.ok()) return connected.status().toString();
    Transport& t = **connected;
    std::vector<char> buf(1 << 20, 'x');
    Request req;
    int64_t start = nowNs();
    Status status;
    if (rank == 0) {
      auto registration = MemoryRegistration::create(t, buf.data(), buf.size());
      if (!registration.ok()) return registration.status().toString();
      status = t.postSend(1, 5, buf.data(), buf.size(), &req);
      if (status.ok()) status = waitOne(t, &req, Deadline::after(20));
      // Either the whole message left through the ring or rank 1 gave up on it: both are fine here.
      return "";
    }
    status = t.postRecv(0, 5, buf.data(), 1000, &req);
    if (status.ok()) status = waitOne(t, &req, Deadline::after(20));
    double seconds = (nowNs() - start) * 1e-9;
    if (status.ok()) return "a 1 MiB message was accepted by a 1000-byte receive";
    if (!contains(status.message(), "disagree")) return "unexpected error: " + status.toString();
    return seconds < 10 ? "" : fmt::format("the disagreement took {:.1f} s to surface", seconds);
  });
  CHECK(codes == std::vector<int>{0, 0});
}

TEST_CASE("ibverbs zero copy: ranks with different zero-copy sizes are refused at setup", "[ibverbs][zerocopy]") {
  NSHIM_REQUIRE_RDMA();
  auto codes = runJob(2, [&](const UniqueId& id, int rank) -> std::string {
    IbverbsOptions options = testOptions();
    options.timeoutSeconds = 10;
    options.zeroCopyMin = rank == 0 ? kZeroCopyMin : 0;
    auto connected = connectIbverbsTransport(id, rank, 2, options);
    if (connected.ok()) return "connected despite different NCCLSHIM_IB_ZERO_COPY_MIN";
    return contains(connected.status().message(), "NCCLSHIM_IB_ZERO_COPY_MIN") ? "" : connected.status().toString();
  });
  CHECK(codes == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace nshim
