// A by-hand throughput check of the ibverbs transport (hidden; bench/verbs_bench.sh runs it in the
// soft-RoCE VM next to ib_write_bw):   ./build/unit_tests "[verbsbench]"
// Two processes: rank 0 streams NCCLSHIM_BENCH_BYTES [32M] to rank 1 as NCCLSHIM_BENCH_MSG [1M]
// messages (a window of 8 in flight), then both stream as much to each other at once, then both
// run NCCLSHIM_BENCH_ITERS [3] allreduces of NCCLSHIM_BENCH_ALLREDUCE [8M] bytes of int32 and then
// of float32. Each runs twice: from plain memory (through the transport's rings) and then from
// buffers registered with the transport (zero copy; the "-zero-copy" lines). (Under QEMU TCG a float32 sum runs in software, about 5 ms per MiB against 0.6 ms for
// int32, and takes that CPU from soft-RoCE; on hardware both cost the same.) Rank 0 prints one line
// per measurement (bandwidths per direction):
//   verbs-bench p2p[-zero-copy] bytes=N seconds=S gbps=G zero_copy_bytes=Z
//   verbs-bench bidir[-zero-copy] bytes=N seconds=S gbps=G zero_copy_bytes=Z
//   verbs-bench allreduce[-zero-copy] type=T bytes=N seconds=S algbw_gbps=G busbw_gbps=G zero_copy_bytes=Z
// (Z: bytes the receiving rank, rank 0 but rank 1 in the one-way stream, received zero-copy.)
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "collectives/collectives.h"
#include "common/clock.h"
#include "common/env.h"
#include "tests/test_util.h"
#include "tests/verbs/verbs_test_util.h"
#include "transport/bootstrap/bootstrap.h"

namespace nshim {
namespace {

// Bytes this rank has received zero-copy from the other so far.
uint64_t zeroCopyBytes(Transport& t) { return t.peerBytes(1 - t.rank()).receivedZeroCopy; }

// Registers `buf` when `on` (the registrations end with the returned owners).
std::string registerIf(bool on, Transport& t, std::span<char> buf, std::vector<MemoryRegistration>* owners) {
  if (!on) return "";
  auto registration = MemoryRegistration::create(t, buf.data(), buf.size());
  if (!registration.ok()) return registration.status().toString();
  owners->push_back(std::move(registration).value());
  return "";
}

// Streams `total` bytes as `message`-byte messages, kWindow outstanding: rank 0 to rank 1, or both
// ways at once (`both`), from registered buffers if `registered`. Prints the bandwidth per direction.
std::string stream(Transport& t, size_t total, size_t message, bool both, bool registered) {
  constexpr int kWindow = 8;
  std::vector<char> out(message * kWindow, 's'), in(message * kWindow);
  std::vector<MemoryRegistration> registrations;
  std::string failed = registerIf(registered, t, out, &registrations);
  if (failed.empty()) failed = registerIf(registered, t, in, &registrations);
  if (!failed.empty()) return failed;
  size_t count = std::max<size_t>(1, total / message);
  Deadline deadline = Deadline::after(600);
  int peer = 1 - t.rank();
  bool sends = both || t.rank() == 0, receives = both || t.rank() == 1;
  // A 1-byte handshake so that both sides start together.
  char byte = 0;
  Request hello;
  Status status = t.rank() == 0 ? t.postRecv(peer, 1, &byte, 1, &hello) : t.postSend(peer, 1, &byte, 1, &hello);
  if (status.ok()) status = waitOne(t, &hello, deadline);
  if (!status.ok()) return status.toString();
  // A sliding window like perftest's: post until kWindow messages are outstanding in each
  // direction, then wait for the oldest and post the next.
  int64_t start = nowNs();
  const uint64_t zeroCopyBefore = zeroCopyBytes(t);
  std::vector<Request> sendReqs(kWindow), recvReqs(kWindow);
  size_t posted = 0, done = 0;
  while (done < count) {
    while (posted < count && posted - done < kWindow) {
      size_t slot = posted % kWindow;
      if (receives) {
        status = t.postRecv(peer, 2, in.data() + slot * message, message, &recvReqs[slot]);
        if (!status.ok()) return status.toString();
      }
      if (sends) {
        status = t.postSend(peer, 2, out.data() + slot * message, message, &sendReqs[slot]);
        if (!status.ok()) return status.toString();
      }
      ++posted;
    }
    size_t slot = done % kWindow;
    std::vector<Request*> oldest;
    if (receives) oldest.push_back(&recvReqs[slot]);
    if (sends) oldest.push_back(&sendReqs[slot]);
    status = t.waitAll(oldest, deadline);
    if (!status.ok()) return status.toString();
    ++done;
  }
  // The receiver's acknowledgement ends the clock: everything has landed. It carries what rank 1
  // received zero-copy (in the one-way stream, all that was).
  uint64_t peerZeroCopy = t.rank() == 1 ? t.peerBytes(0).receivedZeroCopy - zeroCopyBefore : 0;
  status = t.rank() == 1 ? t.postSend(peer, 3, &peerZeroCopy, sizeof(peerZeroCopy), &hello)
                         : t.postRecv(peer, 3, &peerZeroCopy, sizeof(peerZeroCopy), &hello);
  if (status.ok()) status = waitOne(t, &hello, deadline);
  if (!status.ok()) return status.toString();
  double seconds = (nowNs() - start) * 1e-9;
  if (t.rank() == 0) {
    std::printf("verbs-bench %s%s bytes=%zu seconds=%.3f gbps=%.4f zero_copy_bytes=%llu\n", both ? "bidir" : "p2p",
                registered ? "-zero-copy" : "", count * message, seconds, count * message * 8e-9 / seconds,
                static_cast<unsigned long long>(both ? zeroCopyBytes(t) - zeroCopyBefore : peerZeroCopy));
    std::fflush(stdout);
  }
  return "";
}

template <typename T>
std::string allreduceBench(Communicator& comm, size_t bytes, int iterations, DataType type, const char* typeName,
                           bool registered) {
  size_t count = bytes / sizeof(T);
  std::vector<T> in(count, T(1)), out(count);
  std::vector<MemoryRegistration> registrations;
  std::string failed =
      registerIf(registered, comm.transport(), {reinterpret_cast<char*>(in.data()), bytes}, &registrations);
  if (failed.empty())
    failed = registerIf(registered, comm.transport(), {reinterpret_cast<char*>(out.data()), bytes}, &registrations);
  if (!failed.empty()) return failed;
  ReduceOp op;
  Status status = allReduce(comm, in.data(), out.data(), count, type, op);  // warm-up
  if (!status.ok()) return status.toString();
  const uint64_t zeroCopyBefore = zeroCopyBytes(comm.transport());
  int64_t start = nowNs();
  for (int i = 0; i < iterations; ++i) {
    status = allReduce(comm, in.data(), out.data(), count, type, op);
    if (!status.ok()) return status.toString();
  }
  double seconds = (nowNs() - start) * 1e-9 / iterations;
  for (size_t i = 0; i < count; ++i) {
    if (out[i] != static_cast<T>(comm.nranks())) {
      return fmt::format("{} allreduce result is wrong at element {}", typeName, i);
    }
  }
  if (comm.rank() == 0) {
    double algbw = bytes * 8e-9 / seconds;
    int n = comm.nranks();
    std::printf(
        "verbs-bench allreduce%s type=%s bytes=%zu seconds=%.3f algbw_gbps=%.4f busbw_gbps=%.4f "
        "zero_copy_bytes=%llu\n",
        registered ? "-zero-copy" : "", typeName, bytes, seconds, algbw, algbw * 2 * (n - 1) / n,
        static_cast<unsigned long long>(zeroCopyBytes(comm.transport()) - zeroCopyBefore));
    std::fflush(stdout);
  }
  return "";
}

TEST_CASE("ibverbs transport throughput (by hand)", "[.][verbsbench]") {
  NSHIM_REQUIRE_RDMA();
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = *id;
  size_t total = static_cast<size_t>(envBytes("NCCLSHIM_BENCH_BYTES", 32 << 20));
  size_t message = static_cast<size_t>(envBytes("NCCLSHIM_BENCH_MSG", 1 << 20));
  size_t allreduceBytes = static_cast<size_t>(envBytes("NCCLSHIM_BENCH_ALLREDUCE", 8 << 20));
  int iterations = static_cast<int>(envInt("NCCLSHIM_BENCH_ITERS", 3));
  auto codes = testing::runRanksInProcesses(
      2,
      [&](int rank) -> std::string {
        IbverbsOptions options = IbverbsOptions::fromEnvironment();
        options.timeoutSeconds = 60;
        auto transport = connectIbverbsTransport(uid, rank, 2, options);
        if (!transport.ok()) return transport.status().toString();
        Communicator comm(std::move(transport).value(), CollectiveOptions::fromEnvironment());
        std::string error;
        for (bool registered : {false, true}) {
          if (error.empty()) error = stream(comm.transport(), total, message, false, registered);
          if (error.empty()) error = stream(comm.transport(), total, message, true, registered);
          if (error.empty() && allreduceBytes > 0) {
            error = allreduceBench<int32_t>(comm, allreduceBytes, iterations, DataType::kInt32, "int32", registered);
          }
          if (error.empty() && allreduceBytes > 0) {
            error = allreduceBench<float>(comm, allreduceBytes, iterations, DataType::kFloat32, "float32", registered);
          }
        }
        return error;
      },
      900);
  CHECK(codes == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace nshim
