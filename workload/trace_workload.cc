// Trace -> Workload: communicator membership from the comm records of every file, then each file's
// op records in recording order (the order number n), with GroupStart/GroupEnd turned into
// group ids and the recorded times into issue offsets, gaps and durations.
#include "workload/trace_workload.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <new>

#include "common/parallel_for.h"
#include "common/rank_ranges.h"
#include "trace/trace_validate.h"
#include "workload/uneven_alltoall.h"

namespace nshim::workload {
namespace {

using trace::OpCode;

struct CommBuild {
  int nranks = 0;
  std::vector<int> members;  // comm rank -> global rank, -1 while unknown
  std::string source;        // where it was first seen
};

std::string where(const trace::TraceFile& file, int64_t line) { return fmt::format("{}:{}", file.path, line); }

ReduceKind toReduceKind(const trace::OpRecord& r) {
  if (r.flags & trace::kOpFlagPreMulSum) return ReduceKind::kPreMulSum;
  if (r.redop >= 0 && r.redop < trace::kNumBuiltinRedOps) return static_cast<ReduceKind>(r.redop);
  return ReduceKind::kSum;  // no reduction, or a user op the replay cannot know: sum moves the same bytes
}

// Membership of every communicator from the init/split records of all files. Every member has its
// own file, so a size above the number of files is refused before anything is sized by it.
Result<std::map<uint64_t, CommBuild>> collectComms(const trace::TraceSet& set) {
  const size_t files = set.files.size();
  std::map<uint64_t, CommBuild> comms;
  for (const trace::TraceFile& file : set.files) {
    const int global = file.globalRank();
    for (const trace::CommEntry& entry : file.comms) {
      const trace::CommRecord& r = entry.record;
      if (r.event != trace::CommEvent::kInit && r.event != trace::CommEvent::kSplit) continue;
      if (r.nranks <= 0 || r.rank < 0 || r.rank >= r.nranks) {
        return NS_ERROR(Code::kInvalidArgument, "{}: communicator {} has rank {} of {}", where(file, entry.line),
                        trace::commIdText(r.commId), r.rank, r.nranks);
      }
      if (static_cast<size_t>(r.nranks) > files) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: field 'nranks': communicator {} declares {} ranks, but the trace "
                        "has {} file{} (one per rank: a rank's file is missing?)",
                        where(file, entry.line), trace::commIdText(r.commId), r.nranks, files, files == 1 ? "" : "s");
      }
      CommBuild& comm = comms[r.commId];
      if (comm.nranks == 0) {
        comm.nranks = r.nranks;
        comm.members.assign(r.nranks, -1);
        comm.source = where(file, entry.line);
      } else if (comm.nranks != r.nranks) {
        return NS_ERROR(Code::kInvalidArgument, "{}: communicator {} has {} ranks here but {} at {}",
                        where(file, entry.line), trace::commIdText(r.commId), r.nranks, comm.nranks, comm.source);
      }
      int& slot = comm.members[r.rank];
      if (slot != -1 && slot != global) {
        return NS_ERROR(Code::kInvalidArgument,
                        "{}: global rank {} claims rank {} of communicator {}, "
                        "which global rank {} holds",
                        where(file, entry.line), global, r.rank, trace::commIdText(r.commId), slot);
      }
      slot = global;
    }
  }
  for (const auto& [id, comm] : comms) {
    for (int r = 0; r < comm.nranks; ++r) {
      if (comm.members[r] == -1) {
        return NS_ERROR(Code::kInvalidArgument,
                        "communicator {} ({} ranks, created at {}): no trace file holds "
                        "its rank {} (a rank's file is missing?)",
                        trace::commIdText(id), comm.nranks, comm.source, r);
      }
    }
  }
  return comms;
}

// a - b, or INT64_MAX / INT64_MIN where the recorded times are so far apart that it would overflow
// (the file holds any int64 time stamp; a replay refuses pacing waits that long: replay.h).
int64_t timeBetween(int64_t a, int64_t b) {
  int64_t difference = 0;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return a > b ? INT64_MAX : INT64_MIN;
}

// Gives the memory of records[0, consumed) back to the system (whole pages only): a converted
// record is never read again, and the vector is freed when the file is done. Lets a large trace's
// peak memory be its records or its operations, not both.
void releaseConsumed(const trace::OpEntry* records, size_t consumed) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(records) + page - 1) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(records + consumed) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// What NCCL decided for each collective call of the file (version 2 traces), by (commId, seq).
std::map<std::pair<uint64_t, uint64_t>, const trace::TaskRecord*> ncclDecisions(const trace::TraceFile& file) {
  std::map<std::pair<uint64_t, uint64_t>, const trace::TaskRecord*> decisions;
  for (const trace::TaskEntry& task : file.tasks) {
    const trace::TaskRecord& r = task.record;
    if ((r.flags & trace::kTaskJoined) && r.kind == trace::TaskKind::kColl)
      decisions.emplace(std::make_pair(r.commId, r.seq), &r);
  }
  return decisions;
}

// NCCL's point-to-point transfers of each call of the file (a send, a receive, or the transfers
// NCCL made an alltoall of), by (commId, seq).
using P2pTasks = std::map<std::pair<uint64_t, uint64_t>, std::vector<const trace::TaskRecord*>>;
P2pTasks ncclP2pTasks(const trace::TraceFile& file) {
  P2pTasks tasks;
  for (const trace::TaskEntry& task : file.tasks) {
    const trace::TaskRecord& r = task.record;
    if ((r.flags & trace::kTaskJoined) && r.kind == trace::TaskKind::kP2p) tasks[{r.commId, r.seq}].push_back(&r);
  }
  return tasks;
}

// The channels NCCL moved `op` on when it made it of point-to-point transfers: a send or receive
// its transfer's, an alltoall (gather, scatter) the most any of its transfers used. 0: unknown.
uint8_t p2pChannelsOf(const WorkOp& op, const std::vector<const trace::TaskRecord*>& tasks) {
  const bool isP2p = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
  uint8_t channels = 0;
  for (const trace::TaskRecord* r : tasks) {
    const std::string_view func = r->func;
    if (r->rootOrPeer == r->rank) continue;  // a copy to itself: no connection
    if (isP2p && (r->rootOrPeer != op.peer || (func == "Send") != (op.kind == OpKind::kSend))) continue;
    channels = std::max(channels, r->nChannels);
  }
  return channels;
}

bool isGpuTimed(const trace::OpRecord& r) {
  return (r.flags & trace::kOpFlagGpuTimed) && r.gpuEndNs >= r.gpuStartNs && r.gpuStartNs > 0;
}

// Whether the file's timeline is the GPU's: every call that reaches the replay was GPU-timed (then
// issue times and gaps are taken from the GPU starts and ends, not from the host calls); the
// earliest GPU start is its origin.
bool gpuTimeline(const trace::TraceFile& file, int64_t* origin) {
  bool any = false;
  *origin = INT64_MAX;
  for (const trace::OpEntry& e : file.ops) {
    const trace::OpRecord& r = e.record;
    if (r.op == OpCode::kGroupStart || r.op == OpCode::kGroupEnd || (r.flags & trace::kOpFlagError)) continue;
    if (!isGpuTimed(r)) return false;
    any = true;
    *origin = std::min(*origin, r.gpuStartNs);
  }
  return any;
}

// One file's op records -> that rank's operations. The records are consumed: their memory is
// released as the conversion goes (when they are in recording order).
Status convertOps(trace::TraceFile& file, const Workload& workload, RankWork* out, TraceLoadStats* stats) {
  // Recording order: the file's order unless several threads' records interleaved (then sorted).
  auto byN = [](const trace::OpEntry& a, const trace::OpEntry& b) { return a.n < b.n; };
  std::vector<const trace::OpEntry*> sorted;
  if (!std::is_sorted(file.ops.begin(), file.ops.end(), byN)) {
    sorted.reserve(file.ops.size());
    for (const trace::OpEntry& e : file.ops) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(), [&byN](auto* a, auto* b) { return byN(*a, *b); });
  }
  size_t calls = 0;
  for (const trace::OpEntry& e : file.ops) {
    calls += e.record.op != OpCode::kGroupStart && e.record.op != OpCode::kGroupEnd ? 1 : 0;
  }
  out->ops.reserve(out->ops.size() + calls);
  const uint32_t fileIndex = internSourceFile(file.path);
  auto entryAt = [&](size_t i) { return sorted.empty() ? &file.ops[i] : sorted[i]; };

  const std::map<std::pair<uint64_t, uint64_t>, const trace::TaskRecord*> decisions = ncclDecisions(file);
  const P2pTasks p2pTasks = ncclP2pTasks(file);
  int depth = 0, groupCounter = 0, currentGroup = 0;
  int64_t firstStart = -1, prevEnd = -1;
  int64_t gpuOrigin = 0;
  const bool onGpu = gpuTimeline(file, &gpuOrigin);
  constexpr size_t kReleaseEvery = 1 << 14;  // records (about 2 MiB)
  size_t nextMark = 0;                       // file.steps is in order of n, as the writer writes it
  for (size_t i = 0; i < file.ops.size(); ++i) {
    if (sorted.empty() && i % kReleaseEvery == 0 && i > 0) releaseConsumed(file.ops.data(), i);
    const trace::OpEntry* entry = entryAt(i);
    const trace::OpRecord& r = entry->record;
    for (; nextMark < file.steps.size() && file.steps[nextMark].n < entry->n; ++nextMark) {
      out->stepMarks.push_back(out->ops.size());
    }
    if (r.op == OpCode::kGroupStart) {
      if (depth++ == 0) currentGroup = ++groupCounter;
      continue;
    }
    if (r.op == OpCode::kGroupEnd) {
      depth = std::max(depth - 1, 0);
      continue;
    }
    WorkOp op;
    op.source = SourceLine(fileIndex, entry->line);
    if (!trace::collectiveOf(r.op, &op.kind)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: unknown op code {}", op.source, static_cast<int>(r.op));
    }
    if (r.flags & trace::kOpFlagError) {  // the call failed when recorded: nothing went on the wire
      if (stats) ++stats->skippedFailedCalls;
      continue;
    }
    const CommGroup* comm = workload.findComm(r.commId);
    if (!comm) {
      return NS_ERROR(Code::kInvalidArgument, "{}: {} on communicator {}, which no file creates", op.source,
                      opKindName(op.kind), trace::commIdText(r.commId));
    }
    const int n = static_cast<int>(comm->members.size());
    if (r.rank < 0 || r.rank >= n || comm->members[r.rank] != out->globalRank) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: global rank {} issues {} as rank {} of communicator {}, "
                      "but that rank belongs to global rank {}",
                      op.source, out->globalRank, opKindName(op.kind), r.rank, trace::commIdText(r.commId),
                      r.rank >= 0 && r.rank < n ? comm->members[r.rank] : -1);
    }
    if (!isValidDataType(r.datatype)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: datatype {} is not an NCCL type", op.source, r.datatype);
    }
    op.commId = r.commId;
    op.seq = r.seq;
    op.count = r.count;
    op.type = static_cast<DataType>(r.datatype);
    op.reduce = toReduceKind(r);
    const CollectiveDescriptor& kind = describe(op.kind);
    if (kind.rooted) op.root = r.root;
    if (kind.pointToPoint) op.peer = r.peer;
    const bool isP2p = kind.pointToPoint;
    const int rankArg = kind.rooted ? op.root : op.peer;
    if ((kind.rooted || isP2p) && (rankArg < 0 || rankArg >= n)) {
      return NS_ERROR(Code::kInvalidArgument, "{}: {} {} is {}, outside communicator {} of {} ranks", op.source,
                      opKindName(op.kind), isP2p ? "peer" : "root", rankArg, trace::commIdText(r.commId), n);
    }
    if (!trace::traceBytesFit(r.op, r.count, r.datatype, n, &op.bytes)) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: field 'count': {} of count {} {} on {} ranks is more than 2^64 "
                      "bytes",
                      op.source, opKindName(op.kind), op.count, dataTypeName(op.type), n);
    }
    if (op.bytes != r.bytes) {
      return NS_ERROR(Code::kInvalidArgument, "{}: bytes {} but {} of count {} {} on {} ranks is {} bytes", op.source,
                      r.bytes, opKindName(op.kind), op.count, dataTypeName(op.type), n, op.bytes);
    }
    // The timeline: the GPU's when every call was GPU-timed, else the host calls'.
    const int64_t start = onGpu ? r.gpuStartNs : r.hostStartNs;
    const int64_t end = onGpu ? r.gpuEndNs : r.hostEndNs;
    if (firstStart < 0) firstStart = onGpu ? gpuOrigin : start;
    op.issueNs = timeBetween(start, firstStart);
    bool batchStart = depth == 0 || out->ops.empty() || out->ops.back().group != currentGroup;
    op.computeNs = batchStart && prevEnd >= 0 ? std::max<int64_t>(0, timeBetween(start, prevEnd)) : 0;
    prevEnd = std::max(prevEnd, end);
    const bool gpuTimed = isGpuTimed(r);
    op.recordedNs = gpuTimed ? timeBetween(r.gpuEndNs, r.gpuStartNs)
                             : (r.hostEndNs >= r.hostStartNs ? timeBetween(r.hostEndNs, r.hostStartNs) : -1);
    op.recordedClock = gpuTimed             ? RecordedClock::kGpu
                       : op.recordedNs >= 0 ? RecordedClock::kCpuCall
                                            : RecordedClock::kNone;
    if (stats && op.recordedNs >= 0) ++(gpuTimed ? stats->gpuTimedOps : stats->cpuTimedOps);
    op.group = depth > 0 ? currentGroup : 0;
    if (auto decision = decisions.find({op.commId, op.seq}); decision != decisions.end()) {
      if (!parseAlgorithm(decision->second->algo, &op.algo)) op.algo = Algorithm::kAuto;  // NVLS, CollNet, ...
      op.channels = decision->second->nChannels;
      if (!parseProtocol(decision->second->proto, &op.proto)) op.proto = Protocol::kAuto;
    }
    if (auto transfers = p2pTasks.find({op.commId, op.seq}); transfers != p2pTasks.end()) {
      op.channels = p2pChannelsOf(op, transfers->second);
    }
    out->ops.push_back(std::move(op));
  }
  for (; nextMark < file.steps.size(); ++nextMark) out->stepMarks.push_back(out->ops.size());
  markUnevenAllToAll(out->ops, workload, out->globalRank);
  return Status::Ok();
}

// The capture's NCCL settings (version 3 headers): rank 0's (the lowest rank's that recorded any),
// and a note where other ranks' differ or the writer left some out.
void capturedNcclEnv(const std::vector<trace::TraceFile*>& byRank, Workload* workload) {
  const trace::TraceFile* reference = nullptr;
  for (const trace::TraceFile* file : byRank) {
    if (file && file->header.version >= 3) {
      reference = file;
      break;
    }
  }
  if (reference == nullptr) return;
  workload->ncclEnv = reference->ncclEnv;
  std::vector<std::string> notes;
  if (reference->ncclEnvLeftOut > 0) {
    notes.push_back(fmt::format("{} left out {} NCCL setting(s) (too long, or a control character)", reference->path,
                                reference->ncclEnvLeftOut));
  }
  for (const trace::TraceFile* file : byRank) {
    if (file && file != reference && file->header.version >= 3 && file->ncclEnv != reference->ncclEnv) {
      notes.push_back(
          fmt::format("global rank {}'s NCCL settings differ from global rank {}'s ({}): the replay uses "
                      "global rank {}'s",
                      file->globalRank(), reference->globalRank(), file->path, reference->globalRank()));
      break;
    }
  }
  for (const std::string& note : notes) workload->ncclEnvNote += (workload->ncclEnvNote.empty() ? "" : "; ") + note;
}

}  // namespace

Result<Workload> workloadFromTraceSet(trace::TraceSet set, TraceLoadStats* stats, int onlyRank) {
  if (set.files.empty()) return NS_ERROR(Code::kInvalidArgument, "the trace has no files");
  Workload workload;
  workload.worldSize = static_cast<int>(set.files.size());
  std::vector<trace::TraceFile*> byRank(workload.worldSize, nullptr);
  for (trace::TraceFile& file : set.files) {
    int g = file.globalRank();
    if (g == trace::kNoRank) {
      return NS_ERROR(Code::kInvalidArgument, "{}: no global rank (header, footer and comm records carry none)",
                      file.path);
    }
    if (g >= workload.worldSize) {  // a rank's file is missing: name the ranks without one
      int highest = g;
      std::vector<int> present;
      for (const trace::TraceFile& f : set.files) {
        highest = std::max(highest, f.globalRank());
        if (f.globalRank() >= 0) present.push_back(f.globalRank());
      }
      int64_t missing = 0;
      const std::string missingText = missingRankRangesText(present, highest + 1, &missing);
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: global rank {}, but the trace has only {} files: no file for "
                      "global rank{} {} (ncclshim-trace validate lists a job's files)",
                      file.path, g, workload.worldSize, missing == 1 ? "" : "s", missingText);
    }
    if (byRank[g]) {
      return NS_ERROR(Code::kInvalidArgument, "{} and {} both hold global rank {}", byRank[g]->path, file.path, g);
    }
    byRank[g] = &file;
    if (stats) {
      stats->cutFiles += file.truncated ? 1 : 0;
      stats->droppedRecords += file.dropped;
    }
  }
  capturedNcclEnv(byRank, &workload);
  NS_ASSIGN_OR_RETURN(auto comms, collectComms(set));
  for (auto& [id, build] : comms) { workload.comms.push_back(CommGroup{id, std::move(build.members), ""}); }
  labelCommsByShape(workload);
  workload.indexComms();
  workload.onlyRank = onlyRank;
  workload.ranks.resize(workload.worldSize);
  // Ranks convert independently (comms are read-only by now): one thread per core. Each file's
  // records are released as soon as it is converted, so the peak holds little more than one copy.
  std::vector<Status> results(workload.worldSize);
  std::vector<TraceLoadStats> rankStats(workload.worldSize);
  parallelFor(static_cast<size_t>(workload.worldSize), [&](size_t g) {
    workload.ranks[g].globalRank = static_cast<int>(g);
    if (onlyRank >= 0 && static_cast<int>(g) != onlyRank) {
      byRank[g]->ops = {};
      return;
    }
    try {
      results[g] = convertOps(*byRank[g], workload, &workload.ranks[g], &rankStats[g]);
    } catch (const std::bad_alloc&) {
      results[g] = NS_ERROR(Code::kSystemError, "{}: out of memory while converting it", byRank[g]->path);
    }
    byRank[g]->ops = {};
  });
  size_t total = 0, gpuTimed = 0, cpuTimed = 0;
  for (int g = 0; g < workload.worldSize; ++g) {
    NS_RETURN_IF_ERROR(results[g]);
    if (stats) stats->skippedFailedCalls += rankStats[g].skippedFailedCalls;
    gpuTimed += rankStats[g].gpuTimedOps;
    cpuTimed += rankStats[g].cpuTimedOps;
    total += workload.ranks[g].ops.size();
  }
  workload.recordedClock = gpuTimed && cpuTimed ? RecordedClock::kMixed
                           : gpuTimed           ? RecordedClock::kGpu
                           : cpuTimed           ? RecordedClock::kCpuCall
                                                : RecordedClock::kNone;
  workload.description = fmt::format("ncclshim trace: {} ranks, {} communicators, {} operations", workload.worldSize,
                                     workload.comms.size(), total);
  return workload;
}

Result<Workload> loadTraceWorkload(const std::string& path, TraceLoadStats* stats, int onlyRank) {
  if (onlyRank < 0) {
    NS_ASSIGN_OR_RETURN(trace::TraceSet set, trace::readTracePath(path));
    NS_ASSIGN_OR_RETURN(Workload workload, workloadFromTraceSet(std::move(set), stats));
    workload.description = fmt::format("{} ({})", workload.description, path);
    return workload;
  }
  // Every file's structure, and this rank's records where its header names it; a file that names
  // its rank only later (comm or footer records) is read again if it turns out to be this rank's.
  trace::ReadOptions structure;
  structure.keepOpsOfRank = onlyRank;
  NS_ASSIGN_OR_RETURN(trace::TraceSet set, trace::readTracePath(path, structure));
  uint64_t records = 0;
  for (trace::TraceFile& file : set.files) {
    records += file.opsNotKept + file.ops.size();
    if (file.globalRank() != onlyRank || file.header.globalRank == onlyRank) continue;
    NS_ASSIGN_OR_RETURN(trace::TraceSet mine, trace::readTracePath(file.path));
    if (mine.files.size() != 1 || mine.files[0].globalRank() != onlyRank) {
      return NS_ERROR(Code::kInvalidArgument, "{}: changed while it was read (global rank {} expected)", file.path,
                      onlyRank);
    }
    file = std::move(mine.files[0]);
  }
  const size_t files = set.files.size();
  NS_ASSIGN_OR_RETURN(Workload workload, workloadFromTraceSet(std::move(set), stats, onlyRank));
  workload.description = fmt::format("ncclshim trace: {} ranks, {} communicators, {} op records ({})", files,
                                     workload.comms.size(), records, path);
  return workload;
}

void labelCommsByShape(Workload& workload) {
  auto strideOf = [](const CommGroup& c) -> int {  // 0 when not a constant positive stride
    if (c.members.size() < 2) return 0;
    int stride = c.members[1] - c.members[0];
    for (size_t i = 2; i < c.members.size(); ++i) {
      if (c.members[i] - c.members[i - 1] != stride) return 0;
    }
    return stride > 0 ? stride : 0;
  };
  int smallestStride = 0;
  for (const CommGroup& c : workload.comms) {
    int s = strideOf(c);
    bool world = static_cast<int>(c.members.size()) == workload.worldSize;
    if (!world && s > 1 && (smallestStride == 0 || s < smallestStride)) smallestStride = s;
  }
  for (size_t i = 0; i < workload.comms.size(); ++i) {
    CommGroup& c = workload.comms[i];
    int s = strideOf(c);
    if (static_cast<int>(c.members.size()) == workload.worldSize && workload.worldSize > 1) c.label = "world";
    else if (s == 1) c.label = "tp";
    else if (s > 1) c.label = s == smallestStride ? "dp" : "pp";
    else c.label = fmt::format("comm{}", i);
  }
}

}  // namespace nshim::workload
