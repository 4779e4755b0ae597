// Process checks of point-to-point (grouped rings, alltoall as PyTorch issues it with grouped
// send/recv, ungrouped pairs, groups mixing collectives and p2p, nested groups, zero bytes, self)
// and of ncclCommSplit (color/key ordering, NCCL_SPLIT_NOCOLOR, splits of splits, split in a group,
// several communicators used in turn).
#include <string>

#include "shim_checks.h"

namespace shimtest {
namespace {

double value(int r, size_t i) { return static_cast<double>((3 * r + i) % 7); }

std::string ringCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count) {
  const int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
  Buffer send(type, count), recv(type, count);
  for (size_t i = 0; i < count; ++i) send.set(i, value(ctx.rank, i));
  std::string what = std::string("grouped ring send/recv of ") + std::to_string(count) + " " + typeName(type);
  NT_TRY(ncclGroupStart());
  ncclResult_t sent = ncclSend(send.data(), count, type, next, comm, nullptr);
  ncclResult_t received = ncclRecv(recv.data(), count, type, prev, comm, nullptr);
  ncclResult_t ended = ncclGroupEnd();
  FirstError first;
  first.keep(ncclFailure(sent, "ncclSend", comm));
  first.keep(ncclFailure(received, "ncclRecv", comm));
  first.keep(ncclFailure(ended, "ncclGroupEnd of " + what, comm));
  if (!first.message.empty()) return first.message;
  return compare(what, recv, 0, count, [&](size_t i) { return value(prev, i); });
}

// PyTorch's all_to_all_single: one group with a send to and a receive from every rank (self too).
std::string allToAllByP2P(const Context& ctx, ncclComm_t comm, size_t count) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(ncclFloat32, count * n), recv(ncclFloat32, count * n);
  for (size_t j = 0; j < count * n; ++j) send.set(j, static_cast<double>((ctx.rank * 11 + j) % 1000));
  NT_TRY(ncclGroupStart());
  for (int peer = 0; peer < ctx.nranks; ++peer) {
    NT_TRY(ncclSend(send.at(peer * count), count, ncclFloat32, peer, comm, nullptr));
    NT_TRY(ncclRecv(recv.at(peer * count), count, ncclFloat32, peer, comm, nullptr));
  }
  NT_TRY(ncclGroupEnd());
  return compare("alltoall by grouped send/recv, count " + std::to_string(count), recv, 0, count * n, [&](size_t j) {
    size_t peer = j / count;
    return static_cast<double>((peer * 11 + ctx.rank * count + j % count) % 1000);
  });
}

// Rank 0 sends to every other rank with ungrouped calls, then receives their replies.
std::string ungroupedPairs(const Context& ctx, ncclComm_t comm) {
  const size_t count = 5000;
  Buffer buffer(ncclInt32, count);
  if (ctx.rank == 0) {
    for (int peer = 1; peer < ctx.nranks; ++peer) {
      for (size_t i = 0; i < count; ++i) buffer.set(i, static_cast<double>(peer * 100000 + i));
      NT_TRY(ncclSend(buffer.data(), count, ncclInt32, peer, comm, nullptr));
    }
    FirstError first;
    for (int peer = 1; peer < ctx.nranks; ++peer) {
      NT_TRY(ncclRecv(buffer.data(), count, ncclInt32, peer, comm, nullptr));
      first.keep(compare("reply from rank " + std::to_string(peer), buffer, 0, count,
                         [&](size_t i) { return static_cast<double>(peer * 100000 + i + 1); }));
    }
    return first.message;
  }
  NT_TRY(ncclRecv(buffer.data(), count, ncclInt32, 0, comm, nullptr));
  std::string error = compare("ungrouped receive from rank 0", buffer, 0, count,
                              [&](size_t i) { return static_cast<double>(ctx.rank * 100000 + i); });
  for (size_t i = 0; i < count; ++i) buffer.set(i, buffer.get(i) + 1);
  NT_TRY(ncclSend(buffer.data(), count, ncclInt32, 0, comm, nullptr));
  return error;
}

// A group of allreduce, a p2p ring and allgather: run in issue order at the group's end.
std::string mixedGroup(const Context& ctx, ncclComm_t comm) {
  const size_t count = 257;
  const size_t n = static_cast<size_t>(ctx.nranks);
  const int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
  Buffer reduced(ncclFloat64, count), ring(ncclFloat64, count), gathered(ncclFloat64, count * n),
      mine(ncclFloat64, count);
  for (size_t i = 0; i < count; ++i) {
    reduced.set(i, static_cast<double>(ctx.rank + i));
    mine.set(i, value(ctx.rank, i));
  }
  NT_TRY(ncclGroupStart());
  NT_TRY(ncclAllReduce(reduced.data(), reduced.data(), count, ncclFloat64, ncclSum, comm, nullptr));
  NT_TRY(ncclSend(mine.data(), count, ncclFloat64, next, comm, nullptr));
  NT_TRY(ncclRecv(ring.data(), count, ncclFloat64, prev, comm, nullptr));
  NT_TRY(ncclAllGather(mine.data(), gathered.data(), count, ncclFloat64, comm, nullptr));
  NT_TRY(ncclGroupEnd());
  FirstError first;
  const double rankSum = n * (n - 1) / 2.0;
  first.keep(compare("allreduce in mixed group", reduced, 0, count, [&](size_t i) { return rankSum + n * i; }));
  first.keep(compare("ring in mixed group", ring, 0, count, [&](size_t i) { return value(prev, i); }));
  first.keep(compare("allgather in mixed group", gathered, 0, count * n,
                     [&](size_t j) { return value(static_cast<int>(j / count), j % count); }));
  return first.message;
}

std::string nestedGroup(const Context& ctx, ncclComm_t comm) {
  const int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
  Buffer send(ncclUint8, 999), recv(ncclUint8, 999), none(ncclUint8, 0);
  for (size_t i = 0; i < 999; ++i) send.set(i, value(ctx.rank, i));
  NT_TRY(ncclGroupStart());
  NT_TRY(ncclGroupStart());
  NT_TRY(ncclSend(send.data(), 999, ncclUint8, next, comm, nullptr));
  NT_TRY(ncclGroupEnd());  // inner end: nothing runs yet
  NT_TRY(ncclRecv(recv.data(), 999, ncclUint8, prev, comm, nullptr));
  NT_TRY(ncclSend(none.data(), 0, ncclUint8, next, comm, nullptr));  // zero-byte messages match too
  NT_TRY(ncclRecv(none.data(), 0, ncclUint8, prev, comm, nullptr));
  NT_TRY(ncclGroupEnd());
  return compare("nested group ring", recv, 0, 999, [&](size_t i) { return value(prev, i); });
}

std::string selfSendRecv(const Context& ctx, ncclComm_t comm) {
  Buffer send(ncclInt64, 100), recv(ncclInt64, 100);
  for (size_t i = 0; i < 100; ++i) send.set(i, static_cast<double>(ctx.rank * 1000 + i));
  NT_TRY(ncclGroupStart());
  NT_TRY(ncclSend(send.data(), 100, ncclInt64, ctx.rank, comm, nullptr));
  NT_TRY(ncclRecv(recv.data(), 100, ncclInt64, ctx.rank, comm, nullptr));
  NT_TRY(ncclGroupEnd());
  return compare("send/recv to self", recv, 0, 100, [&](size_t i) { return static_cast<double>(ctx.rank * 1000 + i); });
}

// Allgathers `tag` over comm and checks the communicator's size and member order.
std::string checkMembers(ncclComm_t comm, int tag, const std::vector<int>& expectedTags, int expectedRank) {
  int count = -1, rank = -1;
  NT_TRY(ncclCommCount(comm, &count));
  NT_TRY(ncclCommUserRank(comm, &rank));
  if (count != static_cast<int>(expectedTags.size()) || rank != expectedRank) {
    return "split communicator has rank " + std::to_string(rank) + " of " + std::to_string(count) + ", expected " +
           std::to_string(expectedRank) + " of " + std::to_string(expectedTags.size());
  }
  Buffer gathered(ncclInt32, expectedTags.size());
  int32_t mine = tag;
  NT_TRY(ncclAllGather(&mine, gathered.data(), 1, ncclInt32, comm, nullptr));
  return compare("members of the split communicator", gathered, 0, expectedTags.size(),
                 [&](size_t j) { return static_cast<double>(expectedTags[j]); });
}

}  // namespace

void runPointToPointChecks(const Context& ctx, ncclComm_t comm) {
  runCheck(ctx, "p2p/grouped-ring", [&] {
    FirstError first;
    for (ncclDataType_t type : {ncclFloat32, ncclInt8, ncclBfloat16, ncclFloat8e5m2}) {
      for (size_t count : {size_t{1}, size_t{1000}, size_t{700001}}) first.keep(ringCase(ctx, comm, type, count));
    }
    return first.message;
  });
  runCheck(ctx, "p2p/alltoall-by-grouped-send-recv", [&] {
    FirstError first;
    for (size_t count : {size_t{5}, size_t{70000}, size_t{300000}}) first.keep(allToAllByP2P(ctx, comm, count));
    return first.message;
  });
  runCheck(ctx, "p2p/ungrouped-pairs", [&] { return ungroupedPairs(ctx, comm); });
  runCheck(ctx, "p2p/group-mixing-collectives", [&] { return mixedGroup(ctx, comm); });
  runCheck(ctx, "p2p/nested-group-and-zero-bytes", [&] { return nestedGroup(ctx, comm); });
  runCheck(ctx, "p2p/self", [&] { return selfSendRecv(ctx, comm); });
}

void runSplitChecks(const Context& ctx, ncclComm_t comm) {
  const int n = ctx.nranks;
  ncclComm_t byParity = nullptr, withoutZero = nullptr, again = nullptr, grouped = nullptr;
  runCheck(ctx, "split/color-and-key", [&]() -> std::string {
    // Key -rank: members ordered by descending parent rank.
    NT_TRY(ncclCommSplit(comm, ctx.rank % 2, -ctx.rank, &byParity, nullptr));
    if (byParity == nullptr) return "ncclCommSplit returned a NULL communicator";
    std::vector<int> members;
    for (int r = n - 1; r >= 0; --r) {
      if (r % 2 == ctx.rank % 2) members.push_back(r);
    }
    int expectedRank = 0;
    while (members[expectedRank] != ctx.rank) ++expectedRank;
    return checkMembers(byParity, ctx.rank, members, expectedRank);
  });
  runCheck(ctx, "split/nocolor", [&]() -> std::string {
    int color = ctx.rank == 0 ? NCCL_SPLIT_NOCOLOR : 7;
    withoutZero = reinterpret_cast<ncclComm_t>(0x1);  // must be overwritten
    NT_TRY(ncclCommSplit(comm, color, ctx.rank, &withoutZero, nullptr));
    if (ctx.rank == 0) return withoutZero == nullptr ? "" : "NCCL_SPLIT_NOCOLOR did not give a NULL communicator";
    std::vector<int> members;
    for (int r = 1; r < n; ++r) members.push_back(r);
    return checkMembers(withoutZero, ctx.rank, members, ctx.rank - 1);
  });
  runCheck(ctx, "split/split-of-split-and-interleaved-use", [&]() -> std::string {
    if (byParity == nullptr) return "no parity communicator";
    NT_TRY(ncclCommSplit(byParity, 0, 0, &again, nullptr));  // equal keys: parent order kept
    int parentRank = -1, size = -1, rank = -1;
    NT_TRY(ncclCommUserRank(byParity, &parentRank));
    NT_TRY(ncclCommCount(again, &size));
    NT_TRY(ncclCommUserRank(again, &rank));
    if (rank != parentRank) return "equal keys did not keep the parent's order";
    FirstError first;
    ncclComm_t comms[] = {comm, byParity, again, comm, again, byParity};
    int sizes[] = {n, size, size, n, size, size};
    for (int k = 0; k < 6; ++k) {
      float one = 1, sum = 0;
      first.keep(ncclFailure(ncclAllReduce(&one, &sum, 1, ncclFloat32, ncclSum, comms[k], nullptr), "ncclAllReduce"));
      if (first.message.empty() && sum != sizes[k])
        first.keep("allreduce on communicator " + std::to_string(k) + " gave " + std::to_string(sum));
    }
    return first.message;
  });
  runCheck(ctx, "split/inside-group", [&]() -> std::string {
    NT_TRY(ncclGroupStart());
    NT_TRY(ncclCommSplit(comm, 3, ctx.rank, &grouped, nullptr));
    NT_TRY(ncclGroupEnd());
    if (grouped == nullptr) return "split in a group gave no communicator";
    std::vector<int> members;
    for (int r = 0; r < n; ++r) members.push_back(r);
    return checkMembers(grouped, ctx.rank, members, ctx.rank);
  });
  runCheck(ctx, "split/destroy", [&]() -> std::string {
    for (ncclComm_t c : {again, byParity, ctx.rank == 0 ? nullptr : withoutZero, grouped}) {
      if (c != nullptr) NT_TRY(ncclCommDestroy(c));
    }
    return "";
  });
}

}  // namespace shimtest
