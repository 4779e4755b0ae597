// Single-process scenarios where one process holds every rank: ncclCommInitAll (ranks as threads
// of the in-process fabric) driven both by one thread through groups over all communicators and by
// one thread per rank, splits of those communicators; and ncclCommInitRank of every rank inside one
// group from one thread (TCP).
#include <string>
#include <thread>
#include <vector>

#include "shim_checks.h"

namespace shimtest {
namespace {

double value(int r, size_t i) { return static_cast<double>((3 * r + i) % 7); }

// One thread, one group, an allreduce on every communicator.
std::string groupedAllReduce(const std::vector<ncclComm_t>& comms, size_t count) {
  const int n = static_cast<int>(comms.size());
  std::vector<Buffer> send, recv;
  for (int r = 0; r < n; ++r) {
    send.emplace_back(ncclFloat32, count);
    recv.emplace_back(ncclFloat32, count);
    for (size_t i = 0; i < count; ++i) send[r].set(i, value(r, i));
  }
  NT_TRY(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    NT_TRY(ncclAllReduce(send[r].data(), recv[r].data(), count, ncclFloat32, ncclSum, comms[r], nullptr));
  }
  NT_TRY(ncclGroupEnd());
  FirstError first;
  for (int r = 0; r < n; ++r) {
    first.keep(compare("grouped allreduce, rank " + std::to_string(r), recv[r], 0, count, [&](size_t i) {
      double sum = 0;
      for (int q = 0; q < n; ++q) sum += value(q, i);
      return sum;
    }));
  }
  return first.message;
}

// One thread, one group: every rank sends a block to every rank (self included).
std::string groupedAllToAllByP2P(const std::vector<ncclComm_t>& comms, size_t count) {
  const int n = static_cast<int>(comms.size());
  std::vector<Buffer> send, recv;
  for (int r = 0; r < n; ++r) {
    send.emplace_back(ncclInt32, count * n);
    recv.emplace_back(ncclInt32, count * n);
    for (size_t j = 0; j < count * n; ++j) send[r].set(j, static_cast<double>(r * 1000000 + j));
  }
  NT_TRY(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      NT_TRY(ncclSend(send[r].at(p * count), count, ncclInt32, p, comms[r], nullptr));
      NT_TRY(ncclRecv(recv[r].at(p * count), count, ncclInt32, p, comms[r], nullptr));
    }
  }
  NT_TRY(ncclGroupEnd());
  FirstError first;
  for (int r = 0; r < n; ++r) {
    first.keep(compare("grouped p2p alltoall, rank " + std::to_string(r), recv[r], 0, count * n,
                       [&](size_t j) { return static_cast<double>((j / count) * 1000000 + r * count + j % count); }));
  }
  return first.message;
}

// One thread, one group: allgather then broadcast on every communicator (two collectives each).
std::string groupedSequence(const std::vector<ncclComm_t>& comms, size_t count) {
  const int n = static_cast<int>(comms.size());
  std::vector<Buffer> mine, gathered, bcast;
  for (int r = 0; r < n; ++r) {
    mine.emplace_back(ncclFloat16, count);
    gathered.emplace_back(ncclFloat16, count * n);
    bcast.emplace_back(ncclFloat16, count);
    for (size_t i = 0; i < count; ++i) mine[r].set(i, value(r, i));
    if (r == n - 1)
      for (size_t i = 0; i < count; ++i) bcast[r].set(i, value(77, i));
  }
  NT_TRY(ncclGroupStart());
  for (int r = 0; r < n; ++r)
    NT_TRY(ncclAllGather(mine[r].data(), gathered[r].data(), count, ncclFloat16, comms[r], nullptr));
  for (int r = 0; r < n; ++r) NT_TRY(ncclBcast(bcast[r].data(), count, ncclFloat16, n - 1, comms[r], nullptr));
  NT_TRY(ncclGroupEnd());
  FirstError first;
  for (int r = 0; r < n; ++r) {
    first.keep(compare("grouped allgather", gathered[r], 0, count * n,
                       [&](size_t j) { return value(static_cast<int>(j / count), j % count); }));
    first.keep(compare("grouped broadcast", bcast[r], 0, count, [&](size_t i) { return value(77, i); }));
  }
  return first.message;
}

// Runs fn(rank) on one thread per rank; returns the first failure.
std::string onThreads(int n, const std::function<std::string(int)>& fn) {
  std::vector<std::string> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { results[r] = fn(r); });
  for (auto& thread : threads) thread.join();
  FirstError first;
  for (int r = 0; r < n; ++r) {
    if (!results[r].empty()) first.keep("rank " + std::to_string(r) + ": " + results[r]);
  }
  return first.message;
}

std::string rankSumOn(ncclComm_t comm, int tag, int expected) {
  int32_t mine = tag, sum = -1;
  NT_TRY(ncclAllReduce(&mine, &sum, 1, ncclInt32, ncclSum, comm, nullptr));
  return sum == expected ? "" : "allreduce gave " + std::to_string(sum) + ", expected " + std::to_string(expected);
}

}  // namespace

void scenarioInitAll(const Context& ctx) {
  const int n = ctx.nranks;
  std::vector<ncclComm_t> comms(n, nullptr);
  bool ready = runCheck(ctx, "create", [&]() -> std::string {
    NT_TRY(ncclCommInitAll(comms.data(), n, nullptr));
    for (int r = 0; r < n; ++r) {
      int count = -1, rank = -1, device = -1;
      NT_TRY(ncclCommCount(comms[r], &count));
      NT_TRY(ncclCommUserRank(comms[r], &rank));
      NT_TRY(ncclCommCuDevice(comms[r], &device));
      if (count != n || rank != r || device != r)
        return "communicator " + std::to_string(r) + " has rank " + std::to_string(rank) + " of " +
               std::to_string(count);
    }
    return "";
  });
  if (!ready) return;
  runCheck(ctx, "devlist", [&]() -> std::string {
    std::vector<ncclComm_t> others(n);
    std::vector<int> devices(n);
    for (int r = 0; r < n; ++r) devices[r] = 10 + r;
    NT_TRY(ncclCommInitAll(others.data(), n, devices.data()));
    for (int r = 0; r < n; ++r) {
      int device = -1;
      NT_TRY(ncclCommCuDevice(others[r], &device));
      if (device != 10 + r) return "device " + std::to_string(device) + " for rank " + std::to_string(r);
      NT_TRY(ncclCommDestroy(others[r]));
    }
    return "";
  });
  runCheck(ctx, "one-thread-grouped-allreduce", [&] {
    FirstError first;
    for (size_t count : {size_t{1000}, size_t{1} << 20}) first.keep(groupedAllReduce(comms, count));
    return first.message;
  });
  runCheck(ctx, "one-thread-grouped-p2p-alltoall", [&] {
    FirstError first;
    for (size_t count : {size_t{3}, size_t{300000}}) first.keep(groupedAllToAllByP2P(comms, count));
    return first.message;
  });
  runCheck(ctx, "one-thread-grouped-collective-sequence", [&] { return groupedSequence(comms, 4097); });
  runCheck(ctx, "thread-per-rank", [&] {
    return onThreads(n, [&](int r) {
      FirstError first;
      for (int k = 0; k < 5; ++k) first.keep(rankSumOn(comms[r], r, n * (n - 1) / 2));
      return first.message;
    });
  });
  std::vector<ncclComm_t> halves(n, nullptr), reversed(n, nullptr);
  runCheck(ctx, "split-thread-per-rank", [&] {
    return onThreads(n, [&](int r) -> std::string {
      NT_TRY(ncclCommSplit(comms[r], r % 2, r, &halves[r], nullptr));
      int count = -1, rank = -1;
      NT_TRY(ncclCommCount(halves[r], &count));
      NT_TRY(ncclCommUserRank(halves[r], &rank));
      if (count != (n + 1 - r % 2) / 2 || rank != r / 2)
        return "split gave rank " + std::to_string(rank) + " of " + std::to_string(count);
      int expected = 0;
      for (int q = r % 2; q < n; q += 2) expected += q;
      return rankSumOn(halves[r], r, expected);
    });
  });
  runCheck(ctx, "split-one-thread-grouped", [&]() -> std::string {
    NT_TRY(ncclGroupStart());
    for (int r = 0; r < n; ++r) NT_TRY(ncclCommSplit(comms[r], 0, -r, &reversed[r], nullptr));
    NT_TRY(ncclGroupEnd());
    std::vector<ncclComm_t> ordered(n);
    for (int r = 0; r < n; ++r) {
      int rank = -1;
      NT_TRY(ncclCommUserRank(reversed[r], &rank));
      if (rank != n - 1 - r) return "rank " + std::to_string(r) + " became " + std::to_string(rank);
      ordered[rank] = reversed[r];
    }
    return groupedAllReduce(ordered, 999);
  });
  runCheck(ctx, "destroy", [&]() -> std::string {
    for (int r = 0; r < n; ++r) {
      for (ncclComm_t comm : {reversed[r], halves[r], comms[r]}) {
        if (comm != nullptr) NT_TRY(ncclCommDestroy(comm));
      }
    }
    return "";
  });
}

void scenarioGroupInit(const Context& ctx) {
  const int n = ctx.nranks;
  std::vector<ncclComm_t> comms(n, nullptr);
  bool ready = runCheck(ctx, "init-every-rank-in-one-group", [&]() -> std::string {
    ncclUniqueId id;
    NT_TRY(ncclGetUniqueId(&id));
    NT_TRY(ncclGroupStart());
    for (int r = 0; r < n; ++r) NT_TRY(ncclCommInitRank(&comms[r], n, id, r));
    NT_TRY(ncclGroupEnd());
    for (int r = 0; r < n; ++r) {
      int rank = -1;
      NT_TRY(ncclCommUserRank(comms[r], &rank));
      if (rank != r) return "communicator " + std::to_string(r) + " has rank " + std::to_string(rank);
    }
    return "";
  });
  if (!ready) return;
  runCheck(ctx, "grouped-allreduce-over-tcp", [&] { return groupedAllReduce(comms, 70000); });
  runCheck(ctx, "grouped-p2p-over-tcp", [&] { return groupedAllToAllByP2P(comms, 1000); });
  runCheck(ctx, "destroy", [&]() -> std::string {
    for (ncclComm_t comm : comms) NT_TRY(ncclCommDestroy(comm));
    return "";
  });
}

}  // namespace shimtest
