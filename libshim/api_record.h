// What the API layer reports of one NCCL call (ApiCall) and the names of the calls: the record
// hook (record_hook.h) takes it, the trace bridge (trace_bridge.h) turns it into trace records. No
// nccl.h here: enum arguments are carried as int32_t with NCCL's numbering.
#pragma once

#include <cstddef>
#include <cstdint>

#include "libshim/api_functions.h"

namespace nshim {

enum class ApiId : uint16_t {
#define NS_API_ID(name) k##name,
  NS_NCCL_API_FUNCTIONS(NS_API_ID)
#undef NS_API_ID
      kNumFunctions
};

namespace detail {
inline constexpr const char* kApiNames[] = {
#define NS_API_NAME(name) "nccl" #name,
    NS_NCCL_API_FUNCTIONS(NS_API_NAME)
#undef NS_API_NAME
};
}  // namespace detail

// "ncclAllReduce" for ApiId::kAllReduce.
inline const char* apiName(ApiId id) { return detail::kApiNames[static_cast<size_t>(id)]; }
// Collectives and point-to-point calls: they take a per-communicator sequence number.
constexpr bool isOperation(ApiId id) { return id >= ApiId::kAllReduce && id <= ApiId::kRecv; }

inline constexpr int32_t kHookNone = -1;     // an argument the function does not have
inline constexpr int32_t kShrinkColor = -2;  // CommCreated::color of a communicator made by ncclCommShrink

// A communicator made by a creation call (ncclCommInitRank*, ncclCommInitAll, ncclCommSplit,
// ncclCommShrink), with what a recorder needs to rebuild the group across ranks.
struct CommCreated {
  void* comm = nullptr;  // the new ncclComm_t; nullptr when none (failure, NCCL_SPLIT_NOCOLOR); a
                         // creation call reports its entries either way
  uint64_t commId = 0;   // equal on all members (trace/comm_id.h), never 0
  int32_t nranks = -1;   // -1 while unknown (a split of a non-blocking comm still initializing)
  int32_t rank = -1;
  int32_t device = -1;     // ncclCommCuDevice, or -1
  void* parent = nullptr;  // split and shrink: the parent communicator
  uint64_t parentId = 0;
  uint64_t splitSeq = 0;      // splits and shrinks of the parent before this one (from 0)
  int32_t color = kHookNone;  // split color (kShrinkColor for a shrink)
  int32_t key = kHookNone;    // split key
};

// One call. Arguments a function does not have keep these defaults; see api_*.cc for the mapping of
// the less obvious ones (noted per field).
struct ApiCall {
  ApiId fn = ApiId::kNumFunctions;
  // The trace's operation number (trace::OpCode) of an operation or group call, else -1: set by the
  // API frame from a constant (trace_bridge.h traceOpOf), so the recorder reads no table for it.
  int16_t traceOp = -1;
  int32_t result = 0;   // ncclResult_t returned (0 for the void and string functions)
  int64_t startNs = 0;  // CLOCK_MONOTONIC (nshim::tscNowNs()) at entry and at return
  int64_t endNs = 0;
  const void* sendbuff = nullptr;  // also ncclBcast/ncclSend buff, Register/WindowRegister buff, MemFree ptr
  void* recvbuff = nullptr;        // also ncclBcast/ncclRecv buff
  uint64_t count = 0;              // count; sendcount (AllGather); recvcount (ReduceScatter); size (MemAlloc,
                                   // Register, WindowRegister); ndev (InitAll); nId (InitRankScalable);
                                   // excludeRanksCount (Shrink)
  int32_t datatype = kHookNone;    // ncclDataType_t
  int32_t redop = kHookNone;       // ncclRedOp_t (also RedOpDestroy's op)
  int32_t root = kHookNone;
  int32_t peer = kHookNone;
  int32_t flags = 0;       // revokeFlags, winFlags, shrinkFlags; residence (PreMulSum); result (ErrorString)
  void* comm = nullptr;    // the communicator argument (creation calls: the parent, if any)
  void* stream = nullptr;  // cudaStream_t
  void* handle = nullptr;  // the other pointer argument: config (creation calls), Register's handle
                           // pointer, Deregister's handle, window (pointer), PreMulSum scalar,
                           // simInfo, MemAlloc's ptr (void**), excludeRanksList (Shrink)
  // State of `comm` when it is a communicator created through the shim (else commId 0).
  uint64_t commId = 0;
  uint64_t seq = 0;  // operations only: per-communicator number, from 0, in issue order
  int32_t nranks = -1;
  int32_t rank = -1;
  int32_t groupDepth = 0;  // ncclGroupStart nesting of this thread (after start / before end)
  int32_t numCreated = 0;  // creation calls: the communicators made (ncclCommInitAll: ndev);
                           // ncclGroupEnd: those created inside the group whose handle appeared
                           // only at its end (GPU-free splits)
  const CommCreated* created = nullptr;
  // GPU timing (gpu_timer.h): CLOCK_MONOTONIC times of the operation's CUDA events.
  int64_t gpuStartNs = 0;
  int64_t gpuEndNs = 0;
  uint32_t gpuFlags = 0;  // kGpuTimed, kGpuCaptured
};

// A collective's or point-to-point call's arguments (api_call.h operationCall); kHookNone for those
// it does not have.
struct OpArgs {
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  int32_t datatype;
  int32_t redop;
  int32_t root;
  int32_t peer;
  void* comm;
  void* stream;
};

// What the frame learns of an operation around its backend call: its communicator's state (as in
// ApiCall), its nesting, times and result. No defaults: the recorded-operation path sets every
// field (api_call.cc), and a plain stack copy costs no stores before it does; value-initialize
// (`OpFacts facts{}`) elsewhere.
struct OpFacts {
  uint64_t commId;
  uint64_t seq;
  int32_t nranks;
  int32_t rank;
  int32_t groupDepth;
  int32_t result;
  int64_t startNs;
  int64_t endNs;
  uint32_t gpuFlags;  // kGpuTimed, kGpuCaptured
  int64_t gpuStartNs;
  int64_t gpuEndNs;
};

inline constexpr uint32_t kGpuTimed = 1;     // gpuStartNs / gpuEndNs are valid
inline constexpr uint32_t kGpuCaptured = 2;  // the stream was being captured into a CUDA graph

// The calls the trace writes (trace_bridge.cc): operations, group starts and ends, and the end of a
// communicator. Creation calls (api_call.h's creationCall) run the hook whenever it is on.
constexpr bool traceWritesCall(ApiId id) {
  return isOperation(id) || id == ApiId::kGroupStart || id == ApiId::kGroupEnd || id == ApiId::kCommDestroy ||
         id == ApiId::kCommAbort || id == ApiId::kCommFinalize;
}

}  // namespace nshim
