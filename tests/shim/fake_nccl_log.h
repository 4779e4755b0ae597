/* The log line of every call the fake NCCL (fake_nccl.c) receives, as printf formats shared by the
 * fake and by the forward test program (forward_test_program.cc), which formats its expectation of
 * each call with the same format and the arguments it passed. One line per call, arguments in
 * nccl.h order; a unique id passed by value appears as the FNV-1a hash of its 128 bytes. */
#ifndef NCCLSHIM_TESTS_FAKE_NCCL_LOG_H
#define NCCLSHIM_TESTS_FAKE_NCCL_LOG_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_NCCL_VERSION 22809
#define FAKE_NCCL_PREMULSUM_OP 8                         /* the op ncclRedOpCreatePreMulSum hands out */
#define FAKE_NCCL_SIM_TIME 42.5f                         /* ncclSimInfo_t.estimatedTime */
#define FAKE_NCCL_ALLREDUCE_XOR 0x5a                     /* allreduce: recv byte = send byte ^ this */
#define FAKE_NCCL_ERROR_PREFIX "fake_nccl error string " /* + the result number */

#define FAKE_FMT_GetVersion "ncclGetVersion version=%p"
#define FAKE_FMT_GetErrorString "ncclGetErrorString result=%d"
#define FAKE_FMT_GetLastError "ncclGetLastError comm=%p"
#define FAKE_FMT_MemAlloc "ncclMemAlloc ptr=%p size=%zu"
#define FAKE_FMT_MemFree "ncclMemFree ptr=%p"
#define FAKE_FMT_ResetDebugInit "ncclResetDebugInit"
#define FAKE_FMT_GetUniqueId "ncclGetUniqueId uniqueId=%p"
#define FAKE_FMT_CommInitRank "ncclCommInitRank comm=%p nranks=%d id=%016llx rank=%d"
#define FAKE_FMT_CommInitRankConfig "ncclCommInitRankConfig comm=%p nranks=%d id=%016llx rank=%d config=%p"
#define FAKE_FMT_CommInitAll "ncclCommInitAll comm=%p ndev=%d devlist=%p"
#define FAKE_FMT_CommInitRankScalable \
  "ncclCommInitRankScalable newcomm=%p nranks=%d myrank=%d nId=%d commIds=%p config=%p"
#define FAKE_FMT_CommSplit "ncclCommSplit comm=%p color=%d key=%d newcomm=%p config=%p"
#define FAKE_FMT_CommShrink \
  "ncclCommShrink comm=%p excludeRanksList=%p excludeRanksCount=%d newcomm=%p config=%p shrinkFlags=%d"
#define FAKE_FMT_CommFinalize "ncclCommFinalize comm=%p"
#define FAKE_FMT_CommDestroy "ncclCommDestroy comm=%p"
#define FAKE_FMT_CommAbort "ncclCommAbort comm=%p"
#define FAKE_FMT_CommRevoke "ncclCommRevoke comm=%p revokeFlags=%d"
#define FAKE_FMT_CommGetAsyncError "ncclCommGetAsyncError comm=%p asyncError=%p"
#define FAKE_FMT_CommCount "ncclCommCount comm=%p count=%p"
#define FAKE_FMT_CommCuDevice "ncclCommCuDevice comm=%p device=%p"
#define FAKE_FMT_CommUserRank "ncclCommUserRank comm=%p rank=%p"
#define FAKE_FMT_CommRegister "ncclCommRegister comm=%p buff=%p size=%zu handle=%p"
#define FAKE_FMT_CommDeregister "ncclCommDeregister comm=%p handle=%p"
#define FAKE_FMT_CommWindowRegister "ncclCommWindowRegister comm=%p buff=%p size=%zu win=%p winFlags=%d"
#define FAKE_FMT_CommWindowDeregister "ncclCommWindowDeregister comm=%p win=%p"
#define FAKE_FMT_RedOpCreatePreMulSum "ncclRedOpCreatePreMulSum op=%p scalar=%p datatype=%d residence=%d comm=%p"
#define FAKE_FMT_RedOpDestroy "ncclRedOpDestroy op=%d comm=%p"
#define FAKE_FMT_AllReduce "ncclAllReduce sendbuff=%p recvbuff=%p count=%zu datatype=%d op=%d comm=%p stream=%p"
#define FAKE_FMT_Broadcast "ncclBroadcast sendbuff=%p recvbuff=%p count=%zu datatype=%d root=%d comm=%p stream=%p"
#define FAKE_FMT_Bcast "ncclBcast buff=%p count=%zu datatype=%d root=%d comm=%p stream=%p"
#define FAKE_FMT_Reduce "ncclReduce sendbuff=%p recvbuff=%p count=%zu datatype=%d op=%d root=%d comm=%p stream=%p"
#define FAKE_FMT_AllGather "ncclAllGather sendbuff=%p recvbuff=%p sendcount=%zu datatype=%d comm=%p stream=%p"
#define FAKE_FMT_ReduceScatter \
  "ncclReduceScatter sendbuff=%p recvbuff=%p recvcount=%zu datatype=%d op=%d comm=%p stream=%p"
#define FAKE_FMT_AlltoAll "ncclAlltoAll sendbuff=%p recvbuff=%p count=%zu datatype=%d comm=%p stream=%p"
#define FAKE_FMT_Gather "ncclGather sendbuff=%p recvbuff=%p count=%zu datatype=%d root=%d comm=%p stream=%p"
#define FAKE_FMT_Scatter "ncclScatter sendbuff=%p recvbuff=%p count=%zu datatype=%d root=%d comm=%p stream=%p"
#define FAKE_FMT_Send "ncclSend sendbuff=%p count=%zu datatype=%d peer=%d comm=%p stream=%p"
#define FAKE_FMT_Recv "ncclRecv recvbuff=%p count=%zu datatype=%d peer=%d comm=%p stream=%p"
#define FAKE_FMT_GroupStart "ncclGroupStart"
#define FAKE_FMT_GroupEnd "ncclGroupEnd"
#define FAKE_FMT_GroupSimulateEnd "ncclGroupSimulateEnd simInfo=%p"

/* FNV-1a 64 of a unique id's bytes, as logged for ids passed by value. */
static inline unsigned long long fakeIdHash(const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ULL;
  return (unsigned long long)hash;
}

#endif
