// Process checks of every collective for every data type, several counts (one above the 1 MiB
// slice), out-of-place and in-place, every reduction (sum, prod, max, min, avg, PreMulSum with host
// and device scalars); every element of every result is checked.
#include <cmath>
#include <string>

#include "shim_checks.h"

namespace shimtest {
namespace {

// Inputs chosen so every partial result is exact in every type (fp8 e5m2 holds 0..8 exactly).
double sumInput(int r, size_t i) { return static_cast<double>((r + 2 * i) % 3); }
double prodInput(int r, size_t i) { return 1.0 + static_cast<double>((r + i) % 2); }
double maxInput(int r, size_t i) { return static_cast<double>((3 * r + i) % 5); }
double moveInput(int r, size_t i) { return static_cast<double>((3 * r + i) % 7); }

// A reduction under test: a built-in op, or PreMulSum (created per use) with a scalar.
struct Reduction {
  const char* name;
  ncclRedOp_t op;  // built-in; ignored for PreMulSum
  bool premul = false;
  ncclScalarResidence_t residence = ncclScalarHostImmediate;
  double scalar = 1;
};
const Reduction kReductions[] = {
    {"sum", ncclSum},
    {"prod", ncclProd},
    {"max", ncclMax},
    {"min", ncclMin},
    {"avg", ncclAvg},
    {"premulsum-host", ncclSum, true, ncclScalarHostImmediate, 2},
    {"premulsum-device", ncclSum, true, ncclScalarDevice, 3},
};

double input(const Reduction& red, int r, size_t i) {
  if (red.op == ncclProd && !red.premul) return prodInput(r, i);
  if ((red.op == ncclMax || red.op == ncclMin) && !red.premul) return maxInput(r, i);
  return sumInput(r, i);
}

double expected(const Reduction& red, ncclDataType_t type, int n, size_t i, size_t inputIndex) {
  double acc = input(red, 0, inputIndex);
  for (int r = 1; r < n; ++r) {
    double v = input(red, r, inputIndex);
    if (red.premul || red.op == ncclSum || red.op == ncclAvg) acc += v;
    if (!red.premul && red.op == ncclProd) acc *= v;
    if (!red.premul && red.op == ncclMax) acc = std::max(acc, v);
    if (!red.premul && red.op == ncclMin) acc = std::min(acc, v);
  }
  if (red.premul) return acc * red.scalar;
  if (red.op == ncclAvg) return isFloatType(type) ? acc / n : std::trunc(acc / n);
  return acc;
}

bool rounded(const Reduction& red) { return red.premul || red.op == ncclAvg; }

// Resolves the reduction on `comm` (creating the PreMulSum op; the caller destroys it).
std::string makeOp(const Reduction& red, ncclDataType_t type, ncclComm_t comm, ncclRedOp_t* op, Buffer* scalar) {
  *op = red.op;
  if (!red.premul) return "";
  scalar->set(0, red.scalar);
  return ncclFailure(ncclRedOpCreatePreMulSum(op, scalar->data(), type, red.residence, comm),
                     "ncclRedOpCreatePreMulSum");
}

std::string label(const char* op, const Reduction& red, size_t count, bool inPlace) {
  return std::string(op) + " " + red.name + " count " + std::to_string(count) + (inPlace ? " in-place" : "");
}

std::string allReduceCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, const Reduction& red,
                          bool inPlace) {
  Buffer send(type, count), recv(type, count), scalar(type, 1);
  Buffer& in = inPlace ? recv : send;
  for (size_t i = 0; i < count; ++i) in.set(i, input(red, ctx.rank, i));
  ncclRedOp_t op;
  std::string error = makeOp(red, type, comm, &op, &scalar);
  if (!error.empty()) return error;
  error = ncclFailure(ncclAllReduce(in.data(), recv.data(), count, type, op, comm, nullptr), "ncclAllReduce", comm);
  if (red.premul) ncclRedOpDestroy(op, comm);
  if (!error.empty()) return label("allreduce", red, count, inPlace) + ": " + error;
  return compare(
      label("allreduce", red, count, inPlace), recv, 0, count,
      [&](size_t i) { return expected(red, type, ctx.nranks, i, i); }, rounded(red));
}

std::string reduceCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, const Reduction& red,
                       int root) {
  Buffer send(type, count), recv(type, count), scalar(type, 1);
  for (size_t i = 0; i < count; ++i) send.set(i, input(red, ctx.rank, i));
  ncclRedOp_t op;
  std::string error = makeOp(red, type, comm, &op, &scalar);
  if (!error.empty()) return error;
  // Only the root's recvbuff is used: the others pass NULL.
  void* out = ctx.rank == root ? recv.data() : nullptr;
  error = ncclFailure(ncclReduce(send.data(), out, count, type, op, root, comm, nullptr), "ncclReduce", comm);
  if (red.premul) ncclRedOpDestroy(op, comm);
  if (!error.empty() || ctx.rank != root) return error;
  return compare(
      label("reduce", red, count, false) + " root " + std::to_string(root), recv, 0, count,
      [&](size_t i) { return expected(red, type, ctx.nranks, i, i); }, rounded(red));
}

std::string reduceScatterCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count,
                              const Reduction& red, bool inPlace) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(type, count * n), recv(type, inPlace ? count * n : count), scalar(type, 1);
  Buffer& in = inPlace ? recv : send;
  for (size_t j = 0; j < count * n; ++j) in.set(j, input(red, ctx.rank, j));
  const size_t offset = inPlace ? ctx.rank * count : 0;
  ncclRedOp_t op;
  std::string error = makeOp(red, type, comm, &op, &scalar);
  if (!error.empty()) return error;
  error = ncclFailure(ncclReduceScatter(in.data(), recv.at(offset), count, type, op, comm, nullptr),
                      "ncclReduceScatter", comm);
  if (red.premul) ncclRedOpDestroy(op, comm);
  if (!error.empty()) return error;
  return compare(
      label("reducescatter", red, count, inPlace), recv, offset, count,
      [&](size_t i) { return expected(red, type, ctx.nranks, i, ctx.rank * count + i); }, rounded(red));
}

std::string broadcastCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, int root,
                          bool bcast) {
  Buffer send(type, count), recv(type, count);
  Buffer& in = bcast ? recv : send;
  if (ctx.rank == root)
    for (size_t i = 0; i < count; ++i) in.set(i, moveInput(root, i));
  ncclResult_t result = bcast ? ncclBcast(recv.data(), count, type, root, comm, nullptr)
                              : ncclBroadcast(send.data(), recv.data(), count, type, root, comm, nullptr);
  std::string what = std::string(bcast ? "ncclBcast" : "ncclBroadcast") + " count " + std::to_string(count) + " root " +
                     std::to_string(root);
  std::string error = ncclFailure(result, what, comm);
  if (!error.empty()) return error;
  return compare(what, recv, 0, count, [&](size_t i) { return moveInput(root, i); });
}

std::string allGatherCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, bool inPlace) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(type, count), recv(type, count * n);
  void* in = inPlace ? recv.at(ctx.rank * count) : send.data();
  for (size_t i = 0; i < count; ++i) storeValue(type, in, i, moveInput(ctx.rank, i));
  std::string what = "allgather count " + std::to_string(count) + (inPlace ? " in-place" : "");
  std::string error = ncclFailure(ncclAllGather(in, recv.data(), count, type, comm, nullptr), what, comm);
  if (!error.empty()) return error;
  return compare(what, recv, 0, count * n, [&](size_t j) { return moveInput(static_cast<int>(j / count), j % count); });
}

// Block p of rank r's alltoall / scatter input.
double blockInput(int r, size_t p, size_t i) { return static_cast<double>((3 * r + 5 * p + i) % 7); }

std::string allToAllCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(type, count * n), recv(type, count * n);
  for (size_t j = 0; j < count * n; ++j) send.set(j, blockInput(ctx.rank, j / count, j % count));
  std::string what = "alltoall count " + std::to_string(count);
  std::string error = ncclFailure(ncclAlltoAll(send.data(), recv.data(), count, type, comm, nullptr), what, comm);
  if (!error.empty()) return error;
  return compare(what, recv, 0, count * n,
                 [&](size_t j) { return blockInput(static_cast<int>(j / count), ctx.rank, j % count); });
}

std::string gatherCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, int root) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(type, count), recv(type, count * n);
  for (size_t i = 0; i < count; ++i) send.set(i, moveInput(ctx.rank, i));
  std::string what = "gather count " + std::to_string(count) + " root " + std::to_string(root);
  void* out = ctx.rank == root ? recv.data() : nullptr;
  std::string error = ncclFailure(ncclGather(send.data(), out, count, type, root, comm, nullptr), what, comm);
  if (!error.empty() || ctx.rank != root) return error;
  return compare(what, recv, 0, count * n, [&](size_t j) { return moveInput(static_cast<int>(j / count), j % count); });
}

std::string scatterCase(const Context& ctx, ncclComm_t comm, ncclDataType_t type, size_t count, int root) {
  const size_t n = static_cast<size_t>(ctx.nranks);
  Buffer send(type, count * n), recv(type, count);
  if (ctx.rank == root)
    for (size_t j = 0; j < count * n; ++j) send.set(j, blockInput(root, j / count, j % count));
  std::string what = "scatter count " + std::to_string(count) + " root " + std::to_string(root);
  const void* in = ctx.rank == root ? send.data() : nullptr;
  std::string error = ncclFailure(ncclScatter(in, recv.data(), count, type, root, comm, nullptr), what, comm);
  if (!error.empty()) return error;
  return compare(what, recv, 0, count, [&](size_t i) { return blockInput(root, ctx.rank, i); });
}

// Small, odd and multi-slice counts; the multi-slice one (over 1 MiB) only for two types.
std::vector<size_t> countsFor(ncclDataType_t type) {
  std::vector<size_t> counts = {1, 37, 4099};
  if (type == ncclFloat32 || type == ncclBfloat16) counts.push_back(300001);
  return counts;
}

}  // namespace

void runCollectiveChecks(const Context& ctx, ncclComm_t comm) {
  // Every case runs even after a failure, so that the ranks keep issuing the same operations.
  const int last = ctx.nranks - 1;
  for (ncclDataType_t type : kAllTypes) {
    const std::string t = typeName(type);
    runCheck(ctx, "allreduce/" + t, [&] {
      FirstError first;
      first.keep(allReduceCase(ctx, comm, type, 0, kReductions[0], false));  // count 0 is a no-op
      for (size_t count : countsFor(type)) {
        for (const Reduction& red : kReductions) {
          if (count < 5000 || red.op == ncclSum) first.keep(allReduceCase(ctx, comm, type, count, red, false));
        }
        first.keep(allReduceCase(ctx, comm, type, count, kReductions[0], true));
      }
      return first.message;
    });
    runCheck(ctx, "reduce/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) {
        for (const Reduction& red : kReductions) {
          int root = static_cast<int>(count % ctx.nranks);
          if (count < 5000 || red.op == ncclSum) first.keep(reduceCase(ctx, comm, type, count, red, root));
        }
      }
      return first.message;
    });
    runCheck(ctx, "reducescatter/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) {
        for (const Reduction& red : kReductions) {
          if (count < 5000 || red.op == ncclSum) first.keep(reduceScatterCase(ctx, comm, type, count, red, false));
        }
        first.keep(reduceScatterCase(ctx, comm, type, count, kReductions[0], true));
      }
      return first.message;
    });
    runCheck(ctx, "broadcast/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) {
        first.keep(broadcastCase(ctx, comm, type, count, 1 % ctx.nranks, false));
        first.keep(broadcastCase(ctx, comm, type, count, last, true));
      }
      return first.message;
    });
    runCheck(ctx, "allgather/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) {
        first.keep(allGatherCase(ctx, comm, type, count, false));
        first.keep(allGatherCase(ctx, comm, type, count, true));
      }
      return first.message;
    });
    runCheck(ctx, "alltoall/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) first.keep(allToAllCase(ctx, comm, type, count));
      return first.message;
    });
    runCheck(ctx, "gather-scatter/" + t, [&] {
      FirstError first;
      for (size_t count : countsFor(type)) {
        first.keep(gatherCase(ctx, comm, type, count, last));
        first.keep(scatterCase(ctx, comm, type, count, 0));
      }
      return first.message;
    });
  }
}

}  // namespace shimtest
