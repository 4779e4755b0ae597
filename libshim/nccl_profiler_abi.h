// Our declaration of the NCCL profiler plugin interface, version 5: the layout NCCL 2.28 passes to
// a plugin it finds through NCCL_PROFILER_PLUGIN (symbol `ncclProfiler_v5`). Written here from the
// layout of NCCL v2.28.9-1's src/include/plugin/profiler/profiler_v5.h and ext-profiler/example/
// nccl/profiler.h (event type bits, state numbers); NVIDIA's headers are not part of this repository.
// Field order and types are ABI: the offsets below are checked against that header's layout
// (x86-64 / aarch64 LP64). No nccl.h here, so that a test double can include it alone: results are
// `int` (ncclResult_t is an enum of int size; 0 = ncclSuccess).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace nshim::profiler_abi {

// Event type bits (eDescr->type and the activation mask).
enum : uint64_t {
  kEventGroup = 1u << 0,
  kEventColl = 1u << 1,
  kEventP2p = 1u << 2,
  kEventProxyOp = 1u << 3,
  kEventProxyStep = 1u << 4,
  kEventProxyCtrl = 1u << 5,
  kEventKernelCh = 1u << 6,
  kEventNetPlugin = 1u << 7,
  kEventGroupApi = 1u << 8,
  kEventCollApi = 1u << 9,
  kEventP2pApi = 1u << 10,
  kEventKernelLaunch = 1u << 11,
};

// The event states this plugin looks at (ncclProfilerEventState_t, passed as an int-sized enum).
enum : int {
  kStateProxyStepSendGpuWait = 8,
  kStateProxyStepSendWait = 9,  // a send step was posted to the network: transSize = its bytes
  kStateProxyStepRecvWait = 10,
  kStateProxyStepRecvFlushWait = 11,  // a receive step completed: transSize = its bytes
  kStateProxyStepRecvGpuWait = 12,
  kStateProxyOpInProgress = 19,
  kStateProxyStepSendPeerWait = 20,
  kStateKernelChStop = 22,
};

using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

struct EventDescrV5 {
  uint64_t type;    // one kEvent* bit
  void* parentObj;  // the handle this plugin returned for the parent event (or null)
  int rank;
  union {
    struct {
      int graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};

union EventStateArgsV5 {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

struct ProfilerV5 {
  const char* name;
  int (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes, int nranks,
              int rank, DebugLogger logfn);
  int (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
  int (*stopEvent)(void* eHandle);
  int (*recordEventState)(void* eHandle, int eState, EventStateArgsV5* eStateArgs);
  int (*finalize)(void* context);
};

// The layout of NCCL 2.28.9's ncclProfilerEventDescr_v5_t (LP64).
static_assert(sizeof(void*) == 8, "the offsets below are for LP64");
static_assert(offsetof(EventDescrV5, parentObj) == 8 && offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll.seqNumber) == 24 && offsetof(EventDescrV5, coll.func) == 32);
static_assert(offsetof(EventDescrV5, coll.count) == 56 && offsetof(EventDescrV5, coll.root) == 64);
static_assert(offsetof(EventDescrV5, coll.datatype) == 72 && offsetof(EventDescrV5, coll.nChannels) == 80);
static_assert(offsetof(EventDescrV5, coll.nWarps) == 81 && offsetof(EventDescrV5, coll.algo) == 88);
static_assert(offsetof(EventDescrV5, coll.proto) == 96 && offsetof(EventDescrV5, coll.parentGroup) == 104);
static_assert(offsetof(EventDescrV5, p2p.count) == 48 && offsetof(EventDescrV5, p2p.peer) == 56);
static_assert(offsetof(EventDescrV5, p2p.nChannels) == 60 && offsetof(EventDescrV5, p2p.parentGroup) == 64);
static_assert(offsetof(EventDescrV5, proxyOp.channelId) == 28 && offsetof(EventDescrV5, proxyOp.peer) == 32);
static_assert(offsetof(EventDescrV5, proxyOp.nSteps) == 36 && offsetof(EventDescrV5, proxyOp.isSend) == 44);
static_assert(offsetof(EventDescrV5, collApi.root) == 48 && offsetof(EventDescrV5, collApi.graphCaptured) == 64);
static_assert(offsetof(EventDescrV5, kernelCh.pTimer) == 32);
static_assert(sizeof(EventDescrV5) == 112 && sizeof(EventStateArgsV5) == 8);

}  // namespace nshim::profiler_abi
