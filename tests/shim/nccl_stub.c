/* A stand-in libnccl.so.2 for the shim's process tests: every NCCL entry point aborts. The test
 * program links against it, so it can only pass when libncclshim.so is preloaded in front of it
 * (LD_PRELOAD interposition), exactly as it is used in front of a real NCCL. Deliberately written
 * without nccl.h: the signatures do not matter for a function that never returns. */
#include <stdio.h>
#include <stdlib.h>

static void noRealNccl(const char* name) {
  fprintf(stderr, "nccl_stub: %s called: this is not a real NCCL; run with LD_PRELOAD=libncclshim.so\n", name);
  abort();
}

#define STUB(name) \
  void name(void) { noRealNccl(#name); } \
  void p##name(void) { noRealNccl("p" #name); }

STUB(ncclAllGather) STUB(ncclAllReduce) STUB(ncclAlltoAll) STUB(ncclBcast) STUB(ncclBroadcast)
STUB(ncclCommAbort) STUB(ncclCommCount) STUB(ncclCommCuDevice) STUB(ncclCommDeregister)
STUB(ncclCommDestroy) STUB(ncclCommFinalize) STUB(ncclCommGetAsyncError) STUB(ncclCommInitAll)
STUB(ncclCommInitRank) STUB(ncclCommInitRankConfig) STUB(ncclCommInitRankScalable)
STUB(ncclCommRegister) STUB(ncclCommRevoke) STUB(ncclCommShrink) STUB(ncclCommSplit)
STUB(ncclCommUserRank) STUB(ncclCommWindowDeregister) STUB(ncclCommWindowRegister) STUB(ncclGather)
STUB(ncclGetErrorString) STUB(ncclGetLastError) STUB(ncclGetUniqueId) STUB(ncclGetVersion)
STUB(ncclGroupEnd) STUB(ncclGroupSimulateEnd) STUB(ncclGroupStart) STUB(ncclMemAlloc) STUB(ncclMemFree)
STUB(ncclRecv) STUB(ncclRedOpCreatePreMulSum) STUB(ncclRedOpDestroy) STUB(ncclReduce)
STUB(ncclReduceScatter) STUB(ncclResetDebugInit) STUB(ncclScatter) STUB(ncclSend)
