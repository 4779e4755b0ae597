// The replay workload: what every rank of a job does, on which communicators. phynet builds it
// from an ncclshim trace directory, a SimAI workload text file or an AICB CSV, validates it across
// ranks, and then executes it. Ranks are global ranks 0..worldSize-1; communicators list their
// members in communicator-rank order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/collective_descriptor.h"
#include "common/nccl_protocol.h"
#include "common/status.h"
#include "model/algorithm.h"
#include "model/call_choice.h"
#include "model/datatype.h"
#include "workload/source_line.h"

namespace nshim::workload {

// What an op is; its facts (names, buffers, nccl-tests' size and busbw) are its descriptor's.
using OpKind = CollectiveKind;
const char* opKindName(OpKind kind);  // describe(kind).name: "allreduce", "allgather", ..., "send", "recv"
// The name of a report row and of an op filter: the kind's, "sendrecv" for both halves of point-to-point.
const char* reportOpName(OpKind kind);

struct CommGroup {
  uint64_t id = 0;
  std::vector<int> members;  // global ranks; members[r] has rank r in this communicator
  std::string label;         // role for reports: "tp", "dp", "ep", "dp_ep", "pp", "world", or "comm<N>"
};

// What call of the job an op stands for, where that is more than its kind says.
enum class OpOrigin : uint8_t {
  kCall,       // the op is the call
  kAllToAllV,  // one send or receive of an uneven all-to-all (PyTorch's all_to_all_single with split
               // sizes, a PyTorch execution trace's alltoallv): NCCL has no such call, PyTorch issues it
               // as one group of sends and receives with per-peer counts, and the workload keeps it so
};
const char* opOriginName(OpOrigin origin);  // "", "alltoallv"

// What an op's recordedNs is, which decides whether a replay may be compared with it: NCCL's GPU
// time of the call (a GPU-timed trace), the CPU time of the call (an enqueue of ~10 us, not the
// op's duration: a trace recorded without GPU timing, a PyTorch execution trace), both (some calls
// GPU-timed), or the time a workload file states (SimAI / AICB / Chakra: the simulators' figures).
enum class RecordedClock : uint8_t { kNone, kGpu, kCpuCall, kMixed, kFile };
const char* recordedClockName(RecordedClock clock);  // "none", "gpu", "cpu_call", "mixed", "file"
// Whether a replay's time may be divided by such a recorded time (GPU time or a file's figure).
inline bool comparableWithReplay(RecordedClock clock) {
  return clock == RecordedClock::kGpu || clock == RecordedClock::kFile;
}

// 88 bytes (a workload may hold tens of millions): fields are ordered to leave no padding.
struct WorkOp {
  uint64_t commId = 0;
  uint64_t seq = 0;    // per-communicator sequence number on this rank, from 0
  uint64_t count = 0;  // NCCL count argument (per-rank block for allgather/reducescatter/alltoall)
  DataType type = DataType::kFloat32;
  ReduceKind reduce = ReduceKind::kSum;
  OpOrigin origin = OpOrigin::kCall;
  RecordedClock recordedClock = RecordedClock::kNone;  // what this op's recordedNs (and issueNs) measured
  int root = -1;                                       // communicator rank (broadcast/reduce/gather/scatter)
  int peer = -1;                                       // communicator rank (send/recv)
  uint64_t bytes = 0;                                  // nccl-tests "size" of the operation (whole buffer)
  int64_t issueNs = -1;     // recorded start relative to the rank's first op (the GPU start when the rank's
                            // ops are all GPU-timed: recordedClock kGpu), else the host call; -1 unknown
  int64_t computeNs = 0;    // compute time to spend before issuing this op when pacing
  int64_t recordedNs = -1;  // recorded duration (GPU time if the trace has it); -1 unknown
  OpKind kind = OpKind::kAllReduce;
  // What NCCL decided for this call when the trace recorded it (its profiler plugin's nccl_task):
  // the algorithm (kAuto: not recorded, or one the engine does not run), its channels (0: not
  // recorded) and the protocol. The replay runs the op that way.
  Algorithm algo = Algorithm::kAuto;
  uint8_t channels = 0;
  Protocol proto = Protocol::kAuto;  // NCCL's protocol (kAuto: not recorded)
  int group = 0;                     // ops with the same non-zero group id were issued in one ncclGroup
  SourceLine source;                 // "file:line" the op came from, for error messages
};

// The op as a call NCCL decides on (model/call_choice.h): its kind, size and recorded choice.
inline CallRecord callRecordOf(const WorkOp& op) { return {op.kind, op.bytes, {op.algo, op.proto, op.channels}}; }

static_assert(sizeof(WorkOp) <= 88, "WorkOp grew: keep it small, workloads hold millions");

struct RankWork {
  int globalRank = 0;
  std::vector<WorkOp> ops;  // issue order
  // Iteration marks the job made (ncclshimMarkStep, a trace's `step` lines): for each, the index in
  // `ops` of the first op after it (ops.size() for a mark after the last op). Empty: none.
  std::vector<size_t> stepMarks;
};

// Rows of a workload file that put no operation on any rank, counted by what they asked for and why.
struct SkippedRows {
  std::string why;  // "0 bytes", "a group of one rank"
  OpKind kind = OpKind::kAllReduce;
  std::string group;       // the communicator's role ("tp", "pp", ...)
  uint64_t rows = 0;       // distinct file lines
  SourceLine firstSource;  // "file:line" of the first
};

struct Workload {
  int worldSize = 0;
  std::vector<CommGroup> comms;
  std::vector<RankWork> ranks;  // ranks[g].globalRank == g
  // -1: every rank's ops are here. Otherwise only ranks[onlyRank] holds ops (the others are empty):
  // a replay rank keeps its own operations, so its memory does not grow with the world
  // (rank_validation.h checks across ranks from compact digests instead).
  int onlyRank = -1;
  std::string description;           // e.g. "SimAI workload x.txt: TP=2 DP=4 EP=1 PP=1, 34 layers"
  std::vector<SkippedRows> skipped;  // what the reader left out, to be said (workload files only)
  // The NCCL settings the job ran with (a version-3 trace header's nccl_env: name -> value), and what
  // is to be said about them (ranks that differ, settings left out); empty for other inputs.
  std::vector<std::pair<std::string, std::string>> ncclEnv;
  std::string ncclEnvNote;
  RecordedClock recordedClock = RecordedClock::kFile;  // what the ops' recordedNs are
  // id -> index in comms, for findComm (a 9216-rank SimAI job has thousands of communicators and
  // tens of millions of ops). Built by indexComms(); an entry that is stale (comms changed since)
  // is detected and findComm scans instead, so it is an accelerator, never a source of truth.
  std::unordered_map<uint64_t, size_t> commIndex;

  const CommGroup* findComm(uint64_t id) const;
  void indexComms();  // after building or changing comms
};

// Bytes of one element / the nccl-tests "size" for an op of `count` on `nranks` ranks.
uint64_t opBytes(OpKind kind, uint64_t count, DataType type, int nranks);

// "216 reducescatter rows on tp of 0 bytes (first x.txt:5); ...": one clause per SkippedRows.
std::string skippedText(const std::vector<SkippedRows>& skipped);

}  // namespace nshim::workload
