// The shared-memory transport against this machine's memcpy (issue 18): one process sends SIZE
// bytes to another through transport/shm/shm_transport.h (every received byte of the last transfer
// checked, outside the timing), and the sender memcpy's the same bytes; each round runs 5 memcpy
// then 5 transfers, and the table gives each side's best and median bandwidth and the ratio of the
// medians.
//   Usage: build/shm_bench [SIZE_MIB (64)] [ROUNDS (7)]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "common/clock.h"
#include "common/main_fence.h"
#include "transport/shm/shm_transport.h"

namespace {

using nshim::Request;
using nshim::Transport;

constexpr int kRepsPerRound = 5;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Rank `rank` of 2 over shared memory; rank 0 sends, rank 1 receives; `reps` transfers after one
// warm-up, timed by the receiver (from its first post to its last completion) and written to `pipe`.
int runRank(int rank, const nshim::UniqueId& id, size_t bytes, int rounds, int pipeFd,
            const std::function<void()>& beforeRound = {}) {
  nshim::ShmOptions options = nshim::ShmOptions::fromEnvironment();  // NCCLSHIM_SHM_* apply
  options.timeoutSeconds = 60;
  auto transport = nshim::connectShmTransport(id, rank, 2, {true, true}, options);
  if (!transport.ok()) {
    std::fprintf(stderr, "shm_bench: rank %d: %s\n", rank, transport.status().message().c_str());
    return 1;
  }
  Transport& t = *transport.value();
  std::vector<unsigned char> buf(bytes);
  if (rank == 0) {
    std::mt19937_64 rng(7);
    for (auto& b : buf) b = static_cast<unsigned char>(rng());
  }
  for (int i = 0; i < 1 + rounds * kRepsPerRound; ++i) {
    if (beforeRound && i % kRepsPerRound == 1) beforeRound();  // the sender's memcpy reps, between rounds
    Request req;
    const int64_t start = nshim::nowNs();
    nshim::Status s = rank == 0 ? t.postSend(1, i, buf.data(), bytes, &req) : t.postRecv(0, i, buf.data(), bytes, &req);
    if (s.ok()) s = nshim::waitOne(t, &req, nshim::Deadline::after(60));
    if (!s.ok()) {
      std::fprintf(stderr, "shm_bench: rank %d: %s\n", rank, s.message().c_str());
      return 1;
    }
    const double seconds = (nshim::nowNs() - start) * 1e-9;
    if (rank == 1 && i > 0 && write(pipeFd, &seconds, sizeof(seconds)) != sizeof(seconds)) return 1;
    // the other side must not run ahead into the next transfer's timing: a 1-byte turn-around
    char token = 0;
    Request turn;
    s = rank == 0 ? t.postRecv(1, 1u << 30, &token, 1, &turn) : t.postSend(0, 1u << 30, &token, 1, &turn);
    if (s.ok()) s = nshim::waitOne(t, &turn, nshim::Deadline::after(60));
    if (!s.ok()) return 1;
  }
  if (rank == 1) {  // every byte of the last transfer
    std::mt19937_64 rng(7);
    for (size_t k = 0; k < bytes; ++k) {
      if (buf[k] != static_cast<unsigned char>(rng())) {
        std::fprintf(stderr, "shm_bench: byte %zu arrived wrong\n", k);
        return 1;
      }
    }
  }
  return 0;
}

int run(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  const size_t bytes = mib << 20;
  nshim::UniqueId id{};
  std::snprintf(id.bytes, sizeof(id.bytes), "shm-bench-%d", static_cast<int>(getpid()));
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    _exit(runRank(1, id, bytes, rounds, fds[1]));
  }
  close(fds[1]);
  // memcpy side in this process, interleaved with the transfers: before each round of transfers the
  // sender runs a round of memcpy (the receiver waits meanwhile).
  std::vector<unsigned char> src(bytes, 1), dst(bytes, 0);
  std::vector<double> memcpySeconds;
  const int rc = runRank(0, id, bytes, rounds, -1, [&] {
    for (int k = 0; k < kRepsPerRound; ++k) {
      const int64_t start = nshim::nowNs();
      std::memcpy(dst.data(), src.data(), bytes);
      memcpySeconds.push_back((nshim::nowNs() - start) * 1e-9);
      src[static_cast<size_t>(k) % bytes] ^= dst[(static_cast<size_t>(k) * 7) % bytes];
    }
  });
  std::vector<double> shmSeconds(static_cast<size_t>(rounds * kRepsPerRound));
  const ssize_t want = static_cast<ssize_t>(shmSeconds.size() * sizeof(double));
  ssize_t got = 0;
  while (got < want) {
    ssize_t n = read(fds[0], reinterpret_cast<char*>(shmSeconds.data()) + got, want - got);
    if (n <= 0) break;
    got += n;
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (rc != 0 || got != want || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "shm_bench: the transfer failed\n");
    return 1;
  }
  auto gbps = [bytes](double s) { return static_cast<double>(bytes) / s / 1e9; };
  const double memcpyMedian = gbps(median(memcpySeconds)), shmMedian = gbps(median(shmSeconds));
  std::printf("%-28s %10s %10s %10s\n", "path", "MiB", "best GB/s", "median GB/s");
  std::printf("%-28s %10zu %10.2f %10.2f\n", "memcpy (one process)", mib,
              gbps(*std::min_element(memcpySeconds.begin(), memcpySeconds.end())), memcpyMedian);
  std::printf("%-28s %10zu %10.2f %10.2f\n", "shm transport (2 processes)", mib,
              gbps(*std::min_element(shmSeconds.begin(), shmSeconds.end())), shmMedian);
  std::printf("ratio shm/memcpy (medians): %.2f (target >= 0.80)\n", shmMedian / memcpyMedian);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("shm_bench", [&] { return run(argc, argv); });
}
