// One rank of the profiler plugin test (tests/suites/profiler_tests.sh): run with
// LD_PRELOAD=libncclshim.so in forward mode against the fake NCCL, whose profiler side drives the
// shim's plugin as NCCL 2.28 would (fake_nccl_profiler.cc). It issues a fixed list of calls, the
// same the trace checker (profiler_trace_check.cc) expects:
//   allreduce x2, broadcast (root 0), reduce (root nranks-1), allgather, reducescatter, a group of
//   send to rank+1 / recv from rank-1, alltoall; then destroys the communicator.
//   profiler_test_program <rank> <nranks> <dir>
#include <nccl.h>

#include <cstdlib>
#include <vector>

#include "forward_test_util.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <rank> <nranks> <dir>\n", argv[0]);
    return 2;
  }
  fwdtest::Context ctx{"profiler", std::atoi(argv[1]), std::atoi(argv[2]), argv[3]};
  const int r = ctx.rank, n = ctx.nranks;
  ncclUniqueId id{};
  bool shared = r == 0 ? ncclGetUniqueId(&id) == ncclSuccess && fwdtest::publish(ctx, "id", &id, sizeof(id))
                       : fwdtest::fetch(ctx, "id", &id, sizeof(id));
  if (!fwdtest::check(ctx, "unique-id-shared", shared)) return 1;
  ncclComm_t comm = nullptr;
  fwdtest::check(ctx, "init", ncclCommInitRank(&comm, n, id, r) == ncclSuccess);
  std::vector<char> send(1 << 16, 1), recv(1 << 16, 0);
  void* s = send.data();
  void* v = recv.data();
  bool ok = true;
  ok &= ncclAllReduce(s, v, 1000, ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess;
  ok &= ncclAllReduce(s, v, 24, ncclInt64, ncclMax, comm, nullptr) == ncclSuccess;
  ok &= ncclBroadcast(s, v, 500, ncclFloat32, 0, comm, nullptr) == ncclSuccess;
  ok &= ncclReduce(s, v, 300, ncclFloat16, ncclSum, n - 1, comm, nullptr) == ncclSuccess;
  ok &= ncclAllGather(s, v, 64, ncclInt32, comm, nullptr) == ncclSuccess;
  ok &= ncclReduceScatter(s, v, 32, ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess;
  ok &= ncclGroupStart() == ncclSuccess;
  ok &= ncclSend(s, 256, ncclBfloat16, (r + 1) % n, comm, nullptr) == ncclSuccess;
  ok &= ncclRecv(v, 256, ncclBfloat16, (r + n - 1) % n, comm, nullptr) == ncclSuccess;
  ok &= ncclGroupEnd() == ncclSuccess;
  ok &= ncclAlltoAll(s, v, 16, ncclFloat32, comm, nullptr) == ncclSuccess;
  fwdtest::check(ctx, "operations", ok);
  fwdtest::check(ctx, "destroy", ncclCommDestroy(comm) == ncclSuccess);
  return fwdtest::failures() == 0 ? 0 : 1;
}
