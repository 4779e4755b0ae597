// Fixed-size POD records of the ncclshim trace (FORMAT.md): what the shim hands to the recorder for
// every communicator event and every NCCL call, plus the file header/footer. No nccl.h here: the
// enums use NCCL's numbering and the shim casts. Sizes are part of the ABI (kTraceRecordAbi) and are
// checked below; a change in layout bumps kTraceRecordAbi.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/collective_descriptor.h"
#include "common/fnv1a.h"
#include "trace/comm_id.h"

namespace nshim::trace {

constexpr uint32_t kTraceRecordAbi = 1;  // layout version of CommRecord / OpRecord / TaskRecord / ProxyRecord
constexpr int kTraceFormatVersion = 3;   // version of the JSON Lines schema (FORMAT.md); 2 adds nccl_task / nccl_proxy,
                                         // 3 the header's nccl_env and job, `step` lines (iteration marks)
constexpr size_t kHostNameBytes = 64;    // host names are cut to 63 bytes + NUL
constexpr size_t kNcclEnvBytes = 1536;   // the header's nccl_env text (TraceHeader::ncclEnv)

enum class CommEvent : uint32_t { kInit = 0, kSplit = 1, kDestroy = 2, kAbort = 3, kFinalize = 4 };
constexpr int kNumCommEvents = 5;

enum class OpCode : uint32_t {
  kAllReduce = 0,
  kBroadcast = 1,
  kReduce = 2,
  kAllGather = 3,
  kReduceScatter = 4,
  kAlltoAll = 5,
  kGather = 6,
  kScatter = 7,
  kSend = 8,
  kRecv = 9,
  kGroupStart = 10,
  kGroupEnd = 11,
};
constexpr int kNumOpCodes = 12;

// NCCL's ncclDataType_t numbering (ncclInt8 = 0 ... ncclFloat8e5m2 = 11); -1 = no data (groups).
constexpr int32_t kNoDatatype = -1;
constexpr int kNumDatatypes = 12;
// NCCL's ncclRedOp_t numbering for the built-in ops (ncclSum = 0 ... ncclAvg = 4); values >= 5 are
// ops created by ncclRedOpCreatePreMulSum (kOpFlagPreMulSum set); -1 = no reduction.
constexpr int32_t kNoRedOp = -1;
constexpr int kNumBuiltinRedOps = 5;
constexpr int32_t kNoRank = -1;  // root / peer / global rank not applicable or unknown

// OpRecord::flags bits.
constexpr uint32_t kOpFlagGraphCaptured = 1u << 0;  // stream was being captured: not GPU-timed
constexpr uint32_t kOpFlagGpuTimed = 1u << 1;       // gpuStartNs / gpuEndNs are valid
constexpr uint32_t kOpFlagError = 1u << 2;          // the call returned result != ncclSuccess
constexpr uint32_t kOpFlagPreMulSum = 1u << 3;      // redop was created by ncclRedOpCreatePreMulSum
constexpr uint32_t kOpFlagInPlace = 1u << 4;        // sendbuff and recvbuff alias (NCCL's in-place)
constexpr uint32_t kOpFlagsKnown = 0x1f;

// A communicator event. commId is equal on all members (comm_id.h).
// Fields that do not apply are 0 (parentId, color, key, splitSeq for init). The recorder fills
// host and pid when host[0] == 0 / pid == 0, and globalRank when it is kNoRank.
struct CommRecord {
  uint32_t abi;  // kTraceRecordAbi
  CommEvent event;
  uint64_t commId;
  uint64_t parentId;    // split: the parent's commId
  uint64_t splitSeq;    // split: how many splits of the parent came before this one (from 0)
  int64_t timestampNs;  // CLOCK_MONOTONIC (nshim::nowNs())
  int32_t color;        // split color
  int32_t key;          // split key
  int32_t nranks;
  int32_t rank;        // rank in this communicator
  int32_t globalRank;  // RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID / first comm
  int32_t pid;
  int32_t cudaDevice;  // -1 when GPU-free
  int32_t reserved;
  char host[kHostNameBytes];
};

// One NCCL call (collective, point-to-point, or group start/end; group calls have commId 0).
struct OpRecord {
  uint32_t abi;  // kTraceRecordAbi
  OpCode op;
  uint64_t commId;
  uint64_t seq;         // per-communicator sequence number, from 0, in issue order
  uint64_t count;       // NCCL's count argument (per-rank for allgather/reducescatter/alltoall...)
  uint64_t bytes;       // traceBytes(): nccl-tests "size" of the call (FORMAT.md)
  uint64_t stream;      // cudaStream_t as an integer (0 = default stream / GPU-free)
  int64_t hostStartNs;  // CLOCK_MONOTONIC at entry
  int64_t hostEndNs;    // CLOCK_MONOTONIC at return
  int64_t gpuStartNs;   // GPU start in the host CLOCK_MONOTONIC domain; 0 if not timed
  int64_t gpuEndNs;
  int32_t datatype;    // ncclDataType_t or kNoDatatype
  int32_t redop;       // ncclRedOp_t or kNoRedOp
  int32_t root;        // broadcast/reduce/gather/scatter root, else kNoRank
  int32_t peer;        // send/recv peer, else kNoRank
  int32_t rank;        // caller's rank in the communicator (kNoRank for group calls)
  int32_t nranks;      // communicator size (0 for group calls)
  int32_t groupDepth;  // ncclGroupStart nesting depth when called (after start / before end)
  uint32_t flags;      // kOpFlag* bits
  int32_t result;      // ncclResult_t returned to the caller
  int32_t reserved;    // 0
};

static_assert(sizeof(CommRecord) == 136, "CommRecord layout is ABI: bump kTraceRecordAbi");
static_assert(sizeof(OpRecord) == 120, "OpRecord layout is ABI: bump kTraceRecordAbi");
static_assert(std::is_trivially_copyable_v<CommRecord> && std::is_standard_layout_v<CommRecord>);
static_assert(std::is_trivially_copyable_v<OpRecord> && std::is_standard_layout_v<OpRecord>);

// What NCCL decided for one task of a call, as its profiler plugin saw it (libshim/profiler_*.cc,
// FORMAT.md `nccl_task`): a collective (algorithm, protocol, channels) or one point-to-point
// transfer (channels). commId / seq name the API call it belongs to when kTaskJoined is set.
enum class TaskKind : uint32_t { kColl = 0, kP2p = 1 };
constexpr uint32_t kTaskJoined = 1u << 0;  // commId / seq are the recorded API call's
constexpr uint32_t kTaskInCall = 1u << 1;  // launched inside that call: startNs / endNs are the call's
// Launched inside the thread's recorded ncclGroupEnd (grouped calls): startNs / endNs are that
// ncclGroupEnd's.
constexpr uint32_t kTaskInGroupEnd = 1u << 2;
constexpr size_t kNcclNameBytes = 16;  // NCCL's names (func, algo), cut to 15 bytes + NUL
constexpr size_t kNcclProtoBytes = 8;

struct TaskRecord {
  uint32_t abi;  // kTraceRecordAbi
  TaskKind kind;
  uint64_t commId;        // the API call's communicator id (0 when not joined)
  uint64_t seq;           // the API call's per-communicator sequence number
  uint64_t ncclCommHash;  // NCCL's own communicator hash (profiler init)
  uint64_t ncclSeq;       // coll: NCCL's seqNumber (per communicator and function); p2p: 0
  uint64_t count;         // NCCL's count (AllGather / Broadcast: bytes, NCCL counts them as int8)
  int64_t startNs;        // CLOCK_MONOTONIC, bracketing NCCL's launch of the task: the launch
  int64_t endNs;          // (start = end), or with kTaskInCall / kTaskInGroupEnd that call's times
  int32_t rank;
  int32_t nranks;
  int32_t nnodes;      // nodes of the communicator, as NCCL counts them
  int32_t rootOrPeer;  // coll: root; p2p: peer
  int32_t datatype;    // NCCL numbering; kNoDatatype when NCCL gave none or an unknown name
  uint32_t flags;      // kTaskJoined
  uint8_t nChannels;
  uint8_t nWarps;  // coll only
  uint8_t reserved[6];
  char func[kNcclNameBytes];    // NCCL's function name: AllReduce, Send, Recv, ...
  char algo[kNcclNameBytes];    // coll: RING, TREE, PAT, NVLS, ...; p2p: ""
  char proto[kNcclProtoBytes];  // coll: LL, LL128, SIMPLE; p2p: ""
};

// One network proxy operation of a task (profiler ProxyOp event with its steps): what one channel
// sent to or received from one peer. bytes sums the steps' transfer sizes (NET transport).
struct ProxyRecord {
  uint32_t abi;     // kTraceRecordAbi
  uint32_t isSend;  // 1 send, 0 receive (NCCL marks only NET sends as sends)
  uint64_t commId;  // as TaskRecord, through the task this operation belongs to
  uint64_t seq;
  uint64_t ncclCommHash;
  uint64_t bytes;  // sum of the steps' transSize
  int64_t startNs;
  int64_t endNs;
  int32_t rank;
  int32_t peer;
  int32_t channel;
  int32_t nSteps;     // network transfers NCCL planned
  int32_t chunkSize;  // bytes per transfer NCCL planned
  int32_t stepsDone;  // transfers that reported a size
  uint32_t flags;     // kTaskJoined
  int32_t reserved;
  char func[kNcclNameBytes];  // the task's function
};

static_assert(sizeof(TaskRecord) == 136, "TaskRecord layout is ABI: bump kTraceRecordAbi");
static_assert(sizeof(ProxyRecord) == 104, "ProxyRecord layout is ABI: bump kTraceRecordAbi");
static_assert(std::is_trivially_copyable_v<TaskRecord> && std::is_standard_layout_v<TaskRecord>);
static_assert(std::is_trivially_copyable_v<ProxyRecord> && std::is_standard_layout_v<ProxyRecord>);

// An iteration mark (FORMAT.md `step`, version 3): the job called ncclshimMarkStep(); `step` is the
// iteration it starts: the marks the process made so far, this one included (the calls before the
// first mark are iteration 0).
struct StepRecord {
  uint32_t abi;  // kTraceRecordAbi
  uint32_t reserved;
  uint64_t step;        // the iteration this mark starts (marks so far, recorded or not)
  int64_t timestampNs;  // CLOCK_MONOTONIC
};
static_assert(sizeof(StepRecord) == 24, "StepRecord layout is ABI: bump kTraceRecordAbi");
static_assert(std::is_trivially_copyable_v<StepRecord> && std::is_standard_layout_v<StepRecord>);

// File header / footer (the first and last lines of a trace file).
struct TraceHeader {
  int32_t version;  // kTraceFormatVersion
  int32_t abi;      // kTraceRecordAbi of the writer
  int64_t pid;
  int64_t ppid;
  int32_t globalRank;        // kNoRank when not known when the file was opened
  uint32_t ringRecords;      // per-thread buffer capacity
  int64_t startRealtimeNs;   // CLOCK_REALTIME and CLOCK_MONOTONIC sampled together at start:
  int64_t startMonotonicNs;  // realtime = t_ns - startMonotonicNs + startRealtimeNs
  char host[kHostNameBytes];
  // Version 3: the capturing process's NCCL settings (common/nccl_env.h), "NAME=VALUE\n" each, and
  // how many did not fit (or held a control character) and were left out.
  char ncclEnv[kNcclEnvBytes];
  uint32_t ncclEnvLeftOut;
  char job[kHostNameBytes];  // version 3: SLURM_JOB_ID or TORCHELASTIC_RUN_ID, "" when neither is set
};

struct TraceFooter {
  uint64_t records;  // records written (comm + op)
  uint64_t comms;
  uint64_t ops;
  uint64_t dropped;  // records lost because a per-thread buffer stayed full
  uint64_t invalid;  // records refused (wrong abi)
  uint64_t tasks;    // nccl_task lines (version 2)
  uint64_t proxies;  // nccl_proxy lines (version 2)
  uint64_t steps;    // step lines (version 3)
  int32_t globalRank;
  int32_t signal;  // signal that ended the process, 0 otherwise
  int64_t endRealtimeNs;
  int64_t endMonotonicNs;
  char reason[16];    // "close", "exit", "signal"; "cut" when recording stopped at cut (version 3)
  char cut[16];       // "" or "max_mb": the file reached NCCLSHIM_TRACE_MAX_MB, recording stopped
  uint64_t maxBytes;  // with cut "max_mb": the limit, bytes
};

// Size in bytes of one element of an NCCL datatype; 0 for an unknown type.
inline size_t datatypeSize(int32_t datatype) {
  static constexpr uint8_t kSizes[kNumDatatypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return datatype >= 0 && datatype < kNumDatatypes ? kSizes[datatype] : 0;
}

// The collective an op code records (common/collective_descriptor.h); false for group start / end
// and unknown codes.
inline bool collectiveOf(OpCode op, CollectiveKind* kind) {
  static constexpr CollectiveKind kKinds[] = {
      CollectiveKind::kAllReduce,     CollectiveKind::kBroadcast, CollectiveKind::kReduce, CollectiveKind::kAllGather,
      CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,  CollectiveKind::kGather, CollectiveKind::kScatter,
      CollectiveKind::kSend,          CollectiveKind::kRecv};  // in OpCode's order
  const auto i = static_cast<uint32_t>(op);
  if (i >= sizeof(kKinds) / sizeof(kKinds[0])) return false;
  *kind = kKinds[i];
  return true;
}

// The bytes rule of FORMAT.md: the nccl-tests "size" of the call, so that §4's busbw factors apply.
// count*size for allreduce, broadcast, reduce, send, recv; count*size*nranks for allgather (count
// = sendcount), reducescatter (count = recvcount), alltoall (count per peer), gather and scatter
// (count per rank): the descriptor's sizeBlocks. 0 for group start/end.
inline uint64_t traceBytes(OpCode op, uint64_t count, int32_t datatype, int32_t nranks) {
  if (op == OpCode::kGroupStart || op == OpCode::kGroupEnd) return 0;
  const uint64_t unit = count * datatypeSize(datatype);
  CollectiveKind kind;
  return collectiveOf(op, &kind) ? unit * sizeBlocks(describe(kind), nranks) : unit;
}

// traceBytes() when it fits 64 bits; false when count x size (x nranks) does not: no call can move
// that much, so a record that says so is refused (the reader, the validator, the trace loader).
inline bool traceBytesFit(OpCode op, uint64_t count, int32_t datatype, int32_t nranks, uint64_t* bytes) {
  *bytes = 0;
  if (op == OpCode::kGroupStart || op == OpCode::kGroupEnd) return true;
  CollectiveKind kind;
  const uint64_t blocks = collectiveOf(op, &kind) ? sizeBlocks(describe(kind), nranks) : 1;
  uint64_t unit = 0;
  return !__builtin_mul_overflow(count, uint64_t{datatypeSize(datatype)}, &unit) &&
         !__builtin_mul_overflow(unit, blocks, bytes);
}

using ::nshim::fnv1a64;  // common/fnv1a.h

// OpRecord::bytes handed to the recorder as this: its writer sets traceBytes() (off the caller's path).
constexpr uint64_t kBytesByWriter = ~uint64_t(0);

// Records with abi set and every "not applicable" field at its documented value.
inline OpRecord makeOpRecord(OpCode op) {
  OpRecord r;
  std::memset(&r, 0, sizeof(r));
  r.abi = kTraceRecordAbi;
  r.op = op;
  r.datatype = kNoDatatype;
  r.redop = kNoRedOp;
  r.root = kNoRank;
  r.peer = kNoRank;
  r.rank = kNoRank;
  return r;
}

inline TaskRecord makeTaskRecord(TaskKind kind) {
  TaskRecord r;
  std::memset(&r, 0, sizeof(r));
  r.abi = kTraceRecordAbi;
  r.kind = kind;
  r.rank = kNoRank;
  r.rootOrPeer = kNoRank;
  r.datatype = kNoDatatype;
  return r;
}

inline ProxyRecord makeProxyRecord() {
  ProxyRecord r;
  std::memset(&r, 0, sizeof(r));
  r.abi = kTraceRecordAbi;
  r.rank = kNoRank;
  r.peer = kNoRank;
  return r;
}

inline CommRecord makeCommRecord(CommEvent event) {
  CommRecord r;
  std::memset(&r, 0, sizeof(r));
  r.abi = kTraceRecordAbi;
  r.event = event;
  r.globalRank = kNoRank;
  r.cudaDevice = -1;
  return r;
}

}  // namespace nshim::trace
