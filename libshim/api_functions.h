// The NCCL C API functions that libncclshim.so exports (without their "nccl" prefix), as X-macros:
// the record hook's function ids (api_record.h), the backends' table of functions (nccl_functions.h,
// filled by the real NCCL in forward mode and by gpufree_backend.h GPU-free), the GPU-free
// declarations and the pnccl* aliases are all generated from this one list, so none can drift from
// another; each function's type is nccl.h's own. The three parts follow the files that export them
// (api_misc.cc, api_comm.cc, api_ops.cc); the order is that of the function ids.
#pragma once

// The lists keep their grouping by part, as written (not reflowed by clang-format).
// clang-format off
#define NS_NCCL_LIBRARY_FUNCTIONS(X) \
  X(GetVersion) X(GetErrorString) X(GetLastError) X(MemAlloc) X(MemFree) X(ResetDebugInit)

#define NS_NCCL_COMMUNICATOR_FUNCTIONS(X)                                                        \
  /* life cycle */                                                                               \
  X(GetUniqueId) X(CommInitRank) X(CommInitRankConfig) X(CommInitAll) X(CommInitRankScalable)    \
  X(CommSplit) X(CommShrink) X(CommFinalize) X(CommDestroy) X(CommAbort) X(CommRevoke)           \
  /* queries and registration */                                                                 \
  X(CommGetAsyncError) X(CommCount) X(CommCuDevice) X(CommUserRank) X(CommRegister)              \
  X(CommDeregister) X(CommWindowRegister) X(CommWindowDeregister)

#define NS_NCCL_OPERATION_FUNCTIONS(X)                                                           \
  /* reduction operators */                                                                      \
  X(RedOpCreatePreMulSum) X(RedOpDestroy)                                                        \
  /* collectives and point-to-point */                                                           \
  X(AllReduce) X(Broadcast) X(Bcast) X(Reduce) X(AllGather) X(ReduceScatter) X(AlltoAll)         \
  X(Gather) X(Scatter) X(Send) X(Recv)                                                           \
  /* groups */                                                                                   \
  X(GroupStart) X(GroupEnd) X(GroupSimulateEnd)
// clang-format on

#define NS_NCCL_API_FUNCTIONS(X) \
  NS_NCCL_LIBRARY_FUNCTIONS(X) NS_NCCL_COMMUNICATOR_FUNCTIONS(X) NS_NCCL_OPERATION_FUNCTIONS(X)
