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
  void* comm = nullptr;        // the new ncclComm_t; nullptr when none (failure, NCCL_SPLIT_NOCOLOR); a
                               // creation call reports its entries either way
  uint64_t commId = 0;         // equal on all members (trace/comm_id.h), never 0
  int32_t nranks = -1;         // -1 while unknown (a split of a non-blocking comm still initializing)
  int32_t rank = -1;
  int32_t device = -1;         // ncclCommCuDevice, or -1
  void* parent = nullptr;      // split and shrink: the parent communicator
  uint64_t parentId = 0;
  uint64_t splitSeq = 0;       // splits and shrinks of the parent before this one (from 0)
  int32_t color = kHookNone;   // split color (kShrinkColor for a shrink)
  int32_t key = kHookNone;     // split key
};

// A call's arguments, with NCCL's numbering for the enums; kHookNone (or null, 0) for those the
// function does not have. Named as a collective's or point-to-point call's (api_call.h
// operationCall); other functions put theirs in the fields noted.
struct OpArgs {
  const void* sendbuff;  // also ncclBcast/ncclSend buff, Register/WindowRegister buff, MemFree ptr
  void* recvbuff;        // also ncclBcast/ncclRecv buff
  size_t count;          // count; sendcount (AllGather); recvcount (ReduceScatter); size (MemAlloc,
                         // Register, WindowRegister); ndev (InitAll); nId (InitRankScalable);
                         // excludeRanksCount (Shrink)
  int32_t datatype;      // ncclDataType_t
  int32_t redop;         // ncclRedOp_t (also RedOpDestroy's op)
  int32_t root;
  int32_t peer;
  void* comm;            // the communicator argument (creation calls: the parent, if any)
  void* stream;          // cudaStream_t
};

// The arguments of a call that has none (a group call) and ApiCall's before they are filled.
inline constexpr OpArgs kNoOpArgs{nullptr, nullptr, 0, kHookNone, kHookNone, kHookNone, kHookNone, nullptr, nullptr};

// What the frame learns of a call around its backend call: the state of `comm` when it is a
// communicator created through the shim (else commId 0), its nesting, times and result. No
// defaults: the recorded-operation path sets every field (api_call.cc), and a plain stack copy
// costs no stores before it does; value-initialize (`OpFacts facts{}`) elsewhere.
struct OpFacts {
  uint64_t commId;
  uint64_t seq;         // operations only: per-communicator number, from 0, in issue order
  int32_t nranks;       // -1 when unknown
  int32_t rank;
  int32_t groupDepth;   // ncclGroupStart nesting of this thread (after start / before end)
  int32_t result;       // ncclResult_t returned (0 for the void and string functions)
  int64_t startNs;      // CLOCK_MONOTONIC (nshim::tscNowNs()) at entry and at return
  int64_t endNs;
  uint32_t gpuFlags;    // kGpuTimed, kGpuCaptured
  int64_t gpuStartNs;   // GPU timing (gpu_timer.h): CLOCK_MONOTONIC times of the operation's CUDA events
  int64_t gpuEndNs;
};

// One call as the hook gets it: the arguments and the facts, as the recorded-operation path keeps
// them, and what only other functions have.
struct ApiCall {
  ApiId fn = ApiId::kNumFunctions;
  // The trace's operation number (trace::OpCode) of an operation or group call, else -1: set by the
  // API frame from a constant (trace_bridge.h traceOpOf), so the recorder reads no table for it.
  int16_t traceOp = -1;
  OpArgs args = kNoOpArgs;
  OpFacts facts{0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0};
  int32_t flags = 0;                // revokeFlags, winFlags, shrinkFlags; residence (PreMulSum); result (ErrorString)
  void* handle = nullptr;           // the other pointer argument: config (creation calls), Register's handle
                                    // pointer, Deregister's handle, window (pointer), PreMulSum scalar,
                                    // simInfo, MemAlloc's ptr (void**), excludeRanksList (Shrink)
  int32_t numCreated = 0;           // creation calls: the communicators made (ncclCommInitAll: ndev);
                                    // ncclGroupEnd: those created inside the group whose handle appeared
                                    // only at its end (GPU-free splits)
  const CommCreated* created = nullptr;
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
