// The NCCL C API functions that libncclshim.so exports (without their "nccl" prefix), as an
// X-macro: the record hook's function ids (record_hook.h) and the forwarder's table of real NCCL
// functions (real_nccl.h) are both generated from this one list, so they cannot drift apart.
#pragma once

#define NS_NCCL_API_FUNCTIONS(X)                                                                 \
  /* library */                                                                                  \
  X(GetVersion) X(GetErrorString) X(GetLastError) X(MemAlloc) X(MemFree) X(ResetDebugInit)       \
  /* communicator life cycle */                                                                  \
  X(GetUniqueId) X(CommInitRank) X(CommInitRankConfig) X(CommInitAll) X(CommInitRankScalable)    \
  X(CommSplit) X(CommShrink) X(CommFinalize) X(CommDestroy) X(CommAbort) X(CommRevoke)           \
  /* communicator queries and registration */                                                    \
  X(CommGetAsyncError) X(CommCount) X(CommCuDevice) X(CommUserRank) X(CommRegister)              \
  X(CommDeregister) X(CommWindowRegister) X(CommWindowDeregister)                                \
  /* reduction operators */                                                                      \
  X(RedOpCreatePreMulSum) X(RedOpDestroy)                                                        \
  /* operations (collectives, point-to-point) */                                                 \
  X(AllReduce) X(Broadcast) X(Bcast) X(Reduce) X(AllGather) X(ReduceScatter) X(AlltoAll)         \
  X(Gather) X(Scatter) X(Send) X(Recv)                                                           \
  /* groups */                                                                                   \
  X(GroupStart) X(GroupEnd) X(GroupSimulateEnd)
