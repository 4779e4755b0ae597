// Every collective x ranks {1,2,3,4,7,8} x counts {0,1,7,1000,(1<<20)+3} x every data type and
// reduction, on the in-process transport (ranks as threads), every element checked exactly; plus
// the per-peer byte counters against the ring/chain formulas and argument validation. The case
// matrix is the one every transport runs (collectives_over_transport.h).
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "collectives/collectives.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/collectives/collectives_over_transport.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {
namespace {

std::vector<std::unique_ptr<Communicator>> makeComms(int nranks, CollectiveOptions options) {
  auto transports = createInProcessTransports(nranks);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (auto& transport : transports) comms.push_back(std::make_unique<Communicator>(std::move(transport), options));
  return comms;
}

// Runs all cases on all ranks (one thread per rank, cases in the same order everywhere).
void runCases(int nranks, const std::vector<CollectiveCase>& cases, CollectiveOptions options) {
  auto errors = runCasesOnRanks(makeComms(nranks, options), cases);
  for (int rank = 0; rank < nranks; ++rank) {
    INFO("rank " << rank);
    CHECK(errors[rank] == "");
  }
}

TEST_CASE("every collective, type and op over in-process ranks", "[collectives][inproc][full]") {
  int nranks = GENERATE(1, 2, 3, 4, 7, 8);
  INFO("nranks " << nranks);
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  // The largest count is cut into blocks of ~1 MiB slices at the small rank counts; with 7 and 8
  // ranks a quarter of it still splits every block over several ranks' slices and broadcast chains
  // into chunks, at a quarter of the time (the two took 46 of the case's 65 s on 2 cores).
  const size_t largest = nranks >= 7 ? (size_t{1} << 18) + 3 : (size_t{1} << 20) + 3;
  runCases(nranks, collectiveMatrix(nranks, {0, 1, 7, 1000, largest}), options);
}

TEST_CASE("deep pipelines with small slices and chunks", "[collectives][inproc]") {
  int nranks = GENERATE(2, 3, 5, 8);
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.sliceBytes = 256;
  options.chunkBytes = 192;
  options.maxInflight = 3;
  options.smallAllReduceBytes = 0;
  runCases(nranks, collectiveMatrix(nranks, {1000, 4099}), options);
}

TEST_CASE("per-peer byte counters equal the algorithm formulas", "[collectives][inproc][bytes]") {
  int nranks = GENERATE(2, 3, 4, 7);
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.smallAllReduceBytes = 0;  // ring everywhere, as NCCL does for bandwidth
  for (Collective collective : kAllCollectives) {
    for (size_t count : {size_t{1000}, size_t{(1 << 20) + 3}, size_t{7} * nranks * 65536}) {
      CollectiveCase c{collective, count, DataType::kFloat32, ReduceKind::kSum, nranks - 1, false};
      auto comms = makeComms(nranks, options);
      auto errors = runRanksInThreads(nranks, [&](int rank) { return runAndCheck(*comms[rank], c); });
      for (int rank = 0; rank < nranks; ++rank) {
        INFO(collectiveName(collective) << " count " << count << " rank " << rank << " of " << nranks);
        REQUIRE(errors[rank] == "");
        uint64_t sent = 0;
        for (int peer = 0; peer < nranks; ++peer) {
          if (peer != rank) sent += comms[rank]->transport().peerBytes(peer).sent;
        }
        CHECK(sent == expectedSentBytes(c, rank, nranks, options.sliceBytes));
      }
      if (collective == Collective::kAllReduce && count % (nranks * (options.sliceBytes / 4)) == 0) {
        // The textbook figure: 2(n-1)/n of the buffer per rank.
        uint64_t bytes = count * 4;
        CHECK(expectedSentBytes(c, 0, nranks, options.sliceBytes) == 2 * (nranks - 1) * bytes / nranks);
      }
    }
  }
}

TEST_CASE("bad arguments are refused with a clear error", "[collectives][inproc]") {
  auto comms = makeComms(2, CollectiveOptions{});
  Communicator& comm = *comms[0];
  std::vector<float> buf(16);
  ReduceOp sum;
  Status s = allReduce(comm, buf.data(), buf.data(), 4, static_cast<DataType>(12), sum);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("invalid datatype 12") != std::string::npos);
  ReduceOp bad;
  bad.kind = static_cast<ReduceKind>(9);
  s = allReduce(comm, buf.data(), buf.data(), 4, DataType::kFloat32, bad);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("invalid reduction op 9") != std::string::npos);
  s = broadcast(comm, buf.data(), buf.data(), 4, DataType::kFloat32, 2);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("root 2 out of range") != std::string::npos);
  s = allReduce(comm, buf.data(), nullptr, 4, DataType::kFloat32, sum);
  CHECK(s.message().find("recvbuff is NULL") != std::string::npos);
  s = allGather(comm, buf.data(), buf.data(), size_t{1} << 60, DataType::kFloat32);
  CHECK(s.message().find("too large") != std::string::npos);
  P2POp toNowhere{P2POp::Kind::kSend, 5, buf.data(), 4};
  s = runPointToPoint(comm, std::span<const P2POp>(&toNowhere, 1));
  CHECK(s.message().find("peer 5 out of range") != std::string::npos);
}

// A timing replay leaves the reductions' arithmetic out (CollectiveOptions::doGpuWork false): every
// byte still goes over the wire as with it, and the results are not computed (the output of a
// reduce-scatter, filled with a marker first, is never written; with reductions it holds the sum).
TEST_CASE("reductions left out move the same bytes and compute nothing", "[collectives][inproc][bytes]") {
  const int nranks = GENERATE(2, 3, 4);
  const bool reduced = GENERATE(true, false);
  INFO(nranks << " ranks, doGpuWork " << reduced);
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.smallAllReduceBytes = 0;
  options.doGpuWork = reduced;
  constexpr size_t kPerRank = 70000;  // several slices per rank
  constexpr float kMarker = -7.0f;
  for (Collective collective : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kReduce}) {
    auto comms = makeComms(nranks, options);
    auto errors = runRanksInThreads(nranks, [&](int rank) -> std::string {
      const size_t count = collective == Collective::kReduceScatter ? kPerRank : kPerRank * nranks;
      std::vector<float> input(kPerRank * nranks, static_cast<float>(rank + 1));
      std::vector<float> output(count, kMarker);
      Communicator& comm = *comms[rank];
      Status s = collective == Collective::kAllReduce
                     ? allReduce(comm, input.data(), output.data(), count, DataType::kFloat32, ReduceOp{})
                 : collective == Collective::kReduceScatter
                     ? reduceScatter(comm, input.data(), output.data(), count, DataType::kFloat32, ReduceOp{})
                     : reduce(comm, input.data(), output.data(), count, DataType::kFloat32, ReduceOp{}, 0);
      if (!s.ok()) return s.message();
      if (collective == Collective::kReduce && rank != 0) return "";
      const float sum = static_cast<float>(nranks * (nranks + 1) / 2);
      size_t summed = 0, marked = 0;
      for (float v : output) {
        summed += v == sum ? 1 : 0;
        marked += v == kMarker ? 1 : 0;
      }
      if (reduced && summed != output.size()) return fmt::format("{} of {} elements hold the sum", summed, count);
      if (!reduced && summed != 0) return fmt::format("{} elements were reduced with reductions left out", summed);
      if (!reduced && collective == Collective::kReduceScatter && marked != output.size()) {
        return fmt::format("{} of {} output elements were written", count - marked, count);
      }
      return "";
    });
    for (int rank = 0; rank < nranks; ++rank) {
      INFO(collectiveName(collective) << " rank " << rank);
      CHECK(errors[rank] == "");
      uint64_t sent = 0;
      for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) sent += comms[rank]->transport().peerBytes(peer).sent;
      }
      const size_t count = collective == Collective::kReduceScatter ? kPerRank : kPerRank * nranks;
      CollectiveCase c{collective, count, DataType::kFloat32, ReduceKind::kSum, 0, false};
      CHECK(sent == expectedSentBytes(c, rank, nranks, options.sliceBytes));
    }
  }
}

// The allgather's own block is the GPU's copy: left out with the GPU work (the ring then forwards
// whatever the output holds there), the same bytes on the wire.
TEST_CASE("an allgather without the GPU work leaves the rank's own block to the GPU", "[collectives][inproc][bytes]") {
  const int nranks = GENERATE(2, 3);
  const bool gpuWork = GENERATE(true, false);
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.doGpuWork = gpuWork;
  constexpr size_t kPerRank = 70000;
  auto comms = makeComms(nranks, options);
  auto errors = runRanksInThreads(nranks, [&](int rank) -> std::string {
    std::vector<float> input(kPerRank, static_cast<float>(rank + 1));
    std::vector<float> output(kPerRank * nranks, -7.0f);
    Status s = allGather(*comms[rank], input.data(), output.data(), kPerRank, DataType::kFloat32);
    if (!s.ok()) return s.message();
    for (int owner = 0; owner < nranks; ++owner) {
      if (!gpuWork && owner != rank) continue;  // what arrived is what the owner's output held
      const float want = gpuWork ? static_cast<float>(owner + 1) : -7.0f;
      for (size_t i = 0; i < kPerRank; ++i) {
        if (output[owner * kPerRank + i] != want) return fmt::format("block {} element {}: not {}", owner, i, want);
      }
    }
    return "";
  });
  for (int rank = 0; rank < nranks; ++rank) {
    CHECK(errors[rank] == "");
    uint64_t sent = 0;
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) sent += comms[rank]->transport().peerBytes(peer).sent;
    }
    CollectiveCase c{Collective::kAllGather, kPerRank, DataType::kFloat32, ReduceKind::kSum, 0, false};
    CHECK(sent == expectedSentBytes(c, rank, nranks, options.sliceBytes));
  }
}

TEST_CASE("ranks that disagree fail with an error naming them, not a hang", "[collectives][inproc]") {
  CollectiveOptions options;
  options.timeoutSeconds = 2;
  auto comms = makeComms(3, options);
  auto errors = runRanksInThreads(3, [&](int rank) -> std::string {
    std::vector<float> buf(4096, 1.0f);
    size_t count = rank == 1 ? 1000 : 2000;  // rank 1 disagrees about the count
    Status s = allReduce(*comms[rank], buf.data(), buf.data(), count, DataType::kFloat32, ReduceOp{});
    return s.ok() ? "" : s.message();
  });
  int failed = 0;
  for (const std::string& e : errors) failed += e.empty() ? 0 : 1;
  CHECK(failed == 3);
  bool named = false;
  for (const std::string& e : errors) named |= e.find("disagree") != std::string::npos;
  CHECK(named);
}

TEST_CASE("a rank that never arrives times out naming the peer", "[collectives][inproc]") {
  CollectiveOptions options;
  options.timeoutSeconds = 0.5;
  auto comms = makeComms(2, options);
  std::vector<float> buf(8, 1.0f);
  Status s = allReduce(*comms[0], buf.data(), buf.data(), 8, DataType::kFloat32, ReduceOp{});
  CHECK(s.code() == Code::kTimeout);
  CHECK(s.message().find("waiting for rank 1") != std::string::npos);
}

}  // namespace
}  // namespace nshim::testing
