/* A stand-in "real NCCL" (built as libnccl.so.2) for the forwarding tests and the hot-path
 * benchmark. It implements the NCCL API on host memory without communicating:
 *   - FAKE_NCCL_LOG=<file>: one line per call with every argument (fake_nccl_log.h formats);
 *   - deterministic results: version FAKE_NCCL_VERSION, communicators that know nranks/rank/device,
 *     allreduce writes recv = send ^ FAKE_NCCL_ALLREDUCE_XOR, broadcast/recv write a byte ramp;
 *   - FAKE_NCCL_FAIL=<name>[,<name>...]: those functions log, then fail with FAKE_NCCL_FAIL_CODE
 *     (default ncclRemoteError) and set the text ncclGetLastError returns;
 *   - NCCL_PROFILER_PLUGIN=<library>: its ncclProfiler_v5 sees the events NCCL 2.28 raises for the
 *     communicators made by ncclCommInitRank(Config) and for every operation (fake_nccl_profiler.cc);
 *   - built with -DFAKE_NCCL_OLD it lacks the NCCL 2.27 additions (Shrink, Revoke, windows), like
 *     an older NCCL. */
#define _GNU_SOURCE /* flockfile */
#include <nccl.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_nccl_log.h"
#include "fake_nccl_profiler.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

struct FakeComm {
  unsigned magic;
  int nranks;
  int rank;
  int device;
};
#define FAKE_MAGIC 0xfa4ec033u

static FILE* gLog;
static const char* gFail;
static ncclResult_t gFailCode = ncclRemoteError;
static char gLastError[256];
static char gErrorStrings[16][64];
static unsigned gIdCounter;

__attribute__((constructor)) static void fakeInit(void) {
  const char* path = getenv("FAKE_NCCL_LOG");
  if (path != NULL && path[0] != '\0') gLog = fopen(path, "a");
  gFail = getenv("FAKE_NCCL_FAIL");
  if (gFail != NULL && gFail[0] == '\0') gFail = NULL;
  const char* code = getenv("FAKE_NCCL_FAIL_CODE");
  if (code != NULL) gFailCode = (ncclResult_t)atoi(code);
  for (int i = 0; i < 16; ++i) snprintf(gErrorStrings[i], sizeof(gErrorStrings[i]), FAKE_NCCL_ERROR_PREFIX "%d", i);
}

#define LOG(...) \
  do {           \
    if (gLog != NULL) logLine(__VA_ARGS__); \
  } while (0)

static void logLine(const char* format, ...) {
  va_list args;
  va_start(args, format);
  flockfile(gLog);
  vfprintf(gLog, format, args);
  fputc('\n', gLog);
  fflush(gLog);
  funlockfile(gLog);
  va_end(args);
}

/* Whether FAKE_NCCL_FAIL names `name` (comma-separated list). */
static int shouldFail(const char* name) {
  if (gFail == NULL) return 0;
  size_t length = strlen(name);
  for (const char* at = gFail; (at = strstr(at, name)) != NULL; at += length) {
    int startOk = at == gFail || at[-1] == ',';
    int endOk = at[length] == '\0' || at[length] == ',';
    if (startOk && endOk) return 1;
  }
  return 0;
}

#define FAIL_IF_ASKED(name)                                                                          \
  do {                                                                                               \
    if (__builtin_expect(gFail != NULL, 0) && shouldFail(name)) {                                    \
      snprintf(gLastError, sizeof(gLastError), "fake_nccl: %s failed as FAKE_NCCL_FAIL asked", name); \
      return gFailCode;                                                                              \
    }                                                                                                \
  } while (0)

static size_t typeSize(ncclDataType_t type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return (int)type >= 0 && (int)type < 12 ? sizes[type] : 1;
}

static ncclComm_t newComm(int nranks, int rank, int device) {
  struct FakeComm* comm = (struct FakeComm*)calloc(1, sizeof(*comm));
  comm->magic = FAKE_MAGIC;
  comm->nranks = nranks;
  comm->rank = rank;
  comm->device = device;
  return (ncclComm_t)comm;
}

static struct FakeComm* fake(ncclComm_t comm) {
  struct FakeComm* f = (struct FakeComm*)comm;
  return f != NULL && f->magic == FAKE_MAGIC ? f : NULL;
}

static void ramp(void* buffer, size_t bytes, unsigned char start) {
  unsigned char* p = (unsigned char*)buffer;
  for (size_t i = 0; buffer != NULL && i < bytes; ++i) p[i] = (unsigned char)(start + i);
}

/* ---- library ---- */

ncclResult_t ncclGetVersion(int* version) {
  LOG(FAKE_FMT_GetVersion, (void*)version);
  FAIL_IF_ASKED("ncclGetVersion");
  *version = FAKE_NCCL_VERSION;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  LOG(FAKE_FMT_GetErrorString, (int)result);
  return (int)result >= 0 && (int)result < 16 ? gErrorStrings[result] : "fake_nccl unknown result";
}

const char* ncclGetLastError(ncclComm_t comm) {
  LOG(FAKE_FMT_GetLastError, (void*)comm);
  return gLastError;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  LOG(FAKE_FMT_MemAlloc, (void*)ptr, size);
  FAIL_IF_ASKED("ncclMemAlloc");
  *ptr = malloc(size > 0 ? size : 1);
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void* ptr) {
  LOG(FAKE_FMT_MemFree, ptr);
  FAIL_IF_ASKED("ncclMemFree");
  free(ptr);
  return ncclSuccess;
}

void ncclResetDebugInit(void) { LOG(FAKE_FMT_ResetDebugInit); }

/* ---- communicators ---- */

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  LOG(FAKE_FMT_GetUniqueId, (void*)uniqueId);
  FAIL_IF_ASKED("ncclGetUniqueId");
  for (size_t i = 0; i < sizeof(uniqueId->internal); ++i) uniqueId->internal[i] = (char)(i * 31 + 7 + gIdCounter);
  ++gIdCounter;
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  LOG(FAKE_FMT_CommInitRank, (void*)comm, nranks, fakeIdHash(&commId, sizeof(commId)), rank);
  FAIL_IF_ASKED("ncclCommInitRank");
  *comm = newComm(nranks, rank, rank);
  fakeProfilerCommInit(*comm, fakeIdHash(&commId, sizeof(commId)) ^ 0x5eed5eed00000000ull, nranks, rank);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  LOG(FAKE_FMT_CommInitRankConfig, (void*)comm, nranks, fakeIdHash(&commId, sizeof(commId)), rank, (void*)config);
  FAIL_IF_ASKED("ncclCommInitRankConfig");
  *comm = newComm(nranks, rank, rank);
  fakeProfilerCommInit(*comm, fakeIdHash(&commId, sizeof(commId)) ^ 0x5eed5eed00000000ull, nranks, rank);
  return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  LOG(FAKE_FMT_CommInitAll, (void*)comm, ndev, (void*)devlist);
  FAIL_IF_ASKED("ncclCommInitAll");
  for (int i = 0; i < ndev; ++i) comm[i] = newComm(ndev, i, devlist != NULL ? devlist[i] : i);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  LOG(FAKE_FMT_CommInitRankScalable, (void*)newcomm, nranks, myrank, nId, (void*)commIds, (void*)config);
  FAIL_IF_ASKED("ncclCommInitRankScalable");
  *newcomm = newComm(nranks, myrank, myrank);
  return ncclSuccess;
}

/* Split: nothing is exchanged, so the fake answers a deterministic shape: half the parent (rounded
 * up) and rank / 2, whatever the colors. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  LOG(FAKE_FMT_CommSplit, (void*)comm, color, key, (void*)newcomm, (void*)config);
  FAIL_IF_ASKED("ncclCommSplit");
  struct FakeComm* parent = fake(comm);
  if (parent == NULL) return ncclInvalidArgument;
  *newcomm = color == NCCL_SPLIT_NOCOLOR ? NULL : newComm((parent->nranks + 1) / 2, parent->rank / 2, parent->device);
  return ncclSuccess;
}

#ifndef FAKE_NCCL_OLD
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  LOG(FAKE_FMT_CommShrink, (void*)comm, (void*)excludeRanksList, excludeRanksCount, (void*)newcomm, (void*)config,
      shrinkFlags);
  FAIL_IF_ASKED("ncclCommShrink");
  struct FakeComm* parent = fake(comm);
  if (parent == NULL) return ncclInvalidArgument;
  *newcomm = newComm(parent->nranks - excludeRanksCount, parent->rank, parent->device);
  return ncclSuccess;
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  LOG(FAKE_FMT_CommRevoke, (void*)comm, revokeFlags);
  FAIL_IF_ASKED("ncclCommRevoke");
  return ncclSuccess;
}
#endif

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  LOG(FAKE_FMT_CommFinalize, (void*)comm);
  FAIL_IF_ASKED("ncclCommFinalize");
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  LOG(FAKE_FMT_CommDestroy, (void*)comm);
  FAIL_IF_ASKED("ncclCommDestroy");
  fakeProfilerCommFinalize(comm);
  free(fake(comm));
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  LOG(FAKE_FMT_CommAbort, (void*)comm);
  FAIL_IF_ASKED("ncclCommAbort");
  fakeProfilerCommFinalize(comm);
  free(fake(comm));
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  LOG(FAKE_FMT_CommGetAsyncError, (void*)comm, (void*)asyncError);
  FAIL_IF_ASKED("ncclCommGetAsyncError");
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  LOG(FAKE_FMT_CommCount, (void*)comm, (void*)count);
  FAIL_IF_ASKED("ncclCommCount");
  if (fake(comm) == NULL) return ncclInvalidArgument;
  *count = fake(comm)->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  LOG(FAKE_FMT_CommCuDevice, (void*)comm, (void*)device);
  FAIL_IF_ASKED("ncclCommCuDevice");
  if (fake(comm) == NULL) return ncclInvalidArgument;
  *device = fake(comm)->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  LOG(FAKE_FMT_CommUserRank, (void*)comm, (void*)rank);
  FAIL_IF_ASKED("ncclCommUserRank");
  if (fake(comm) == NULL) return ncclInvalidArgument;
  *rank = fake(comm)->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  LOG(FAKE_FMT_CommRegister, (void*)comm, buff, size, (void*)handle);
  FAIL_IF_ASKED("ncclCommRegister");
  *handle = (void*)(uintptr_t)(0xfa4e0000u + size);
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  LOG(FAKE_FMT_CommDeregister, (void*)comm, handle);
  FAIL_IF_ASKED("ncclCommDeregister");
  return ncclSuccess;
}

#ifndef FAKE_NCCL_OLD
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  LOG(FAKE_FMT_CommWindowRegister, (void*)comm, buff, size, (void*)win, winFlags);
  FAIL_IF_ASKED("ncclCommWindowRegister");
  *win = (ncclWindow_t)(uintptr_t)(0xf1d00000u + (unsigned)winFlags);
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  LOG(FAKE_FMT_CommWindowDeregister, (void*)comm, (void*)win);
  FAIL_IF_ASKED("ncclCommWindowDeregister");
  return ncclSuccess;
}
#endif

/* ---- reduction operators ---- */

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  LOG(FAKE_FMT_RedOpCreatePreMulSum, (void*)op, scalar, (int)datatype, (int)residence, (void*)comm);
  FAIL_IF_ASKED("ncclRedOpCreatePreMulSum");
  *op = (ncclRedOp_t)FAKE_NCCL_PREMULSUM_OP;
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  LOG(FAKE_FMT_RedOpDestroy, (int)op, (void*)comm);
  FAIL_IF_ASKED("ncclRedOpDestroy");
  return ncclSuccess;
}

/* ---- operations ---- */

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_AllReduce, sendbuff, recvbuff, count, (int)datatype, (int)op, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclAllReduce");
  fakeProfilerCall(comm, 1, "AllReduce", count, (int)datatype, -1);
  const unsigned char* in = (const unsigned char*)sendbuff;
  unsigned char* out = (unsigned char*)recvbuff;
  size_t bytes = count * typeSize(datatype);
  for (size_t i = 0; in != NULL && out != NULL && i < bytes; ++i) out[i] = in[i] ^ FAKE_NCCL_ALLREDUCE_XOR;
  return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_Broadcast, sendbuff, recvbuff, count, (int)datatype, root, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclBroadcast");
  fakeProfilerCall(comm, 1, "Broadcast", count * typeSize(datatype), (int)ncclInt8, root); /* NCCL counts bytes */
  ramp(recvbuff, count * typeSize(datatype), 0xb0);
  return ncclSuccess;
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  LOG(FAKE_FMT_Bcast, buff, count, (int)datatype, root, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclBcast");
  // As NCCL's own: ncclBroadcast through the exported symbol, which a preloaded shim interposes.
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_Reduce, sendbuff, recvbuff, count, (int)datatype, (int)op, root, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclReduce");
  fakeProfilerCall(comm, 1, "Reduce", count, (int)datatype, root);
  return ncclSuccess;
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_AllGather, sendbuff, recvbuff, sendcount, (int)datatype, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclAllGather");
  fakeProfilerCall(comm, 1, "AllGather", sendcount * typeSize(datatype), (int)ncclInt8, -1);
  return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_ReduceScatter, sendbuff, recvbuff, recvcount, (int)datatype, (int)op, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclReduceScatter");
  fakeProfilerCall(comm, 1, "ReduceScatter", recvcount, (int)datatype, -1);
  return ncclSuccess;
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_AlltoAll, sendbuff, recvbuff, count, (int)datatype, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclAlltoAll");
  /* NCCL makes an alltoall one send and one receive task per peer, inside one group. */
  fakeProfilerGroupStart();
  for (int r = 0; fake(comm) != NULL && r < fake(comm)->nranks; ++r) {
    fakeProfilerCall(comm, 0, "Send", count, (int)datatype, r);
    fakeProfilerCall(comm, 0, "Recv", count, (int)datatype, r);
  }
  fakeProfilerGroupEnd();
  return ncclSuccess;
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_Gather, sendbuff, recvbuff, count, (int)datatype, root, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclGather");
  return ncclSuccess;
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  LOG(FAKE_FMT_Scatter, sendbuff, recvbuff, count, (int)datatype, root, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclScatter");
  return ncclSuccess;
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  LOG(FAKE_FMT_Send, sendbuff, count, (int)datatype, peer, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclSend");
  fakeProfilerCall(comm, 0, "Send", count, (int)datatype, peer);
  return ncclSuccess;
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  LOG(FAKE_FMT_Recv, recvbuff, count, (int)datatype, peer, (void*)comm, (void*)stream);
  FAIL_IF_ASKED("ncclRecv");
  fakeProfilerCall(comm, 0, "Recv", count, (int)datatype, peer);
  ramp(recvbuff, count * typeSize(datatype), 0xc0);
  return ncclSuccess;
}

/* ---- groups ---- */

ncclResult_t ncclGroupStart(void) {
  LOG(FAKE_FMT_GroupStart);
  FAIL_IF_ASKED("ncclGroupStart");
  fakeProfilerGroupStart();
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  LOG(FAKE_FMT_GroupEnd);
  FAIL_IF_ASKED("ncclGroupEnd");
  fakeProfilerGroupEnd();
  return ncclSuccess;
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  LOG(FAKE_FMT_GroupSimulateEnd, (void*)simInfo);
  FAIL_IF_ASKED("ncclGroupSimulateEnd");
  simInfo->estimatedTime = FAKE_NCCL_SIM_TIME;
  return ncclSuccess;
}
