// Checks the traces written under the profiler test (tests/suites/profiler_tests.sh): every field
// of every nccl_task and nccl_proxy line against what the fake NCCL's profiler side raised
// (fake_nccl_profiler.cc, fake_profiler_rules.h) for the calls profiler_test_program made, and
// that each is joined to the op line of its call. Prints "CHECK PASS|FAIL profiler-trace/<check>".
//   profiler_trace_check <trace dir> <nranks> <algo> <proto> [--no-proxy]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/shim/fake_profiler_rules.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"

namespace {

using namespace nshim::trace;

int gFailures = 0;

bool check(const std::string& name, bool ok, const std::string& why = "") {
  if (ok) {
    std::printf("CHECK PASS profiler-trace/%s\n", name.c_str());
  } else {
    std::printf("CHECK FAIL profiler-trace/%s: %s\n", name.c_str(), why.c_str());
    ++gFailures;
  }
  return ok;
}

// A task as the fake raises it, in the order of the trace's fields.
struct Expected {
  TaskKind kind;
  std::string func;
  uint64_t count;
  int32_t datatype;
  int32_t rootOrPeer;
  uint64_t ncclSeq;
};

std::string describe(const TaskRecord& t) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "%s %s count %llu dtype %d root/peer %d nccl_seq %llu algo %s proto %s ch %d warps %d",
                taskKindName(t.kind), t.func, (unsigned long long)t.count, t.datatype, t.rootOrPeer,
                (unsigned long long)t.ncclSeq, t.algo, t.proto, t.nChannels, t.nWarps);
  return line;
}

// The tasks NCCL makes of one recorded op (nccl_seq counted per function in `seqs`).
std::vector<Expected> expectedTasks(const OpRecord& op, std::map<std::string, uint64_t>& seqs) {
  auto coll = [&](const char* func, bool bytesAsInt8) {
    uint64_t count = bytesAsInt8 ? op.count * datatypeSize(op.datatype) : op.count;
    int32_t type = bytesAsInt8 ? 0 : op.datatype;
    return std::vector<Expected>{{TaskKind::kColl, func, count, type, op.root, seqs[func]++}};
  };
  switch (op.op) {
    case OpCode::kAllReduce: return coll("AllReduce", false);
    case OpCode::kBroadcast: return coll("Broadcast", true);
    case OpCode::kReduce: return coll("Reduce", false);
    case OpCode::kAllGather: return coll("AllGather", true);
    case OpCode::kReduceScatter: return coll("ReduceScatter", false);
    case OpCode::kSend: return {{TaskKind::kP2p, "Send", op.count, op.datatype, op.peer, 0}};
    case OpCode::kRecv: return {{TaskKind::kP2p, "Recv", op.count, op.datatype, op.peer, 0}};
    case OpCode::kAlltoAll: {
      std::vector<Expected> tasks;
      for (int r = 0; r < op.nranks; ++r) {
        tasks.push_back({TaskKind::kP2p, "Send", op.count, op.datatype, r, 0});
        tasks.push_back({TaskKind::kP2p, "Recv", op.count, op.datatype, r, 0});
      }
      return tasks;
    }
    default: return {};
  }
}

void checkFile(const TraceFile& file, int nranks, const std::string& algo, const std::string& proto, bool proxies) {
  const std::string who = file.path.substr(file.path.rfind('/') + 1);
  check(who + "/version-current", file.header.version == kTraceFormatVersion, std::to_string(file.header.version));
  check(who + "/footer-counts",
        file.hasFooter && file.footer.tasks == file.tasks.size() && file.footer.proxies == file.proxies.size(),
        std::to_string(file.footer.tasks) + " / " + std::to_string(file.footer.proxies));
  std::map<std::pair<uint64_t, uint64_t>, std::vector<TaskRecord>> tasksOf;
  for (const TaskEntry& t : file.tasks) tasksOf[{t.record.commId, t.record.seq}].push_back(t.record);
  std::map<std::pair<uint64_t, uint64_t>, std::vector<ProxyRecord>> proxiesOf;
  for (const ProxyEntry& p : file.proxies) proxiesOf[{p.record.commId, p.record.seq}].push_back(p.record);

  // Grouped calls come with their ncclGroupStart / ncclGroupEnd lines, one of each per group.
  size_t starts = 0, ends = 0, grouped = 0;
  for (const OpEntry& entry : file.ops) {
    starts += entry.record.op == OpCode::kGroupStart;
    ends += entry.record.op == OpCode::kGroupEnd;
    grouped +=
        entry.record.op != OpCode::kGroupStart && entry.record.op != OpCode::kGroupEnd && entry.record.groupDepth > 0;
  }
  check(who + "/group-lines", grouped == 0 || (starts > 0 && starts == ends),
        std::to_string(grouped) + " grouped ops, " + std::to_string(starts) + " group starts, " + std::to_string(ends) +
            " group ends");

  // The recorded ncclGroupEnd lines' times: the tasks NCCL launched inside one carry them.
  std::multimap<int64_t, int64_t> groupEndTimes;
  for (const OpEntry& entry : file.ops) {
    if (entry.record.op == OpCode::kGroupEnd) groupEndTimes.emplace(entry.record.hostStartNs, entry.record.hostEndNs);
  }
  auto launchedInGroupEndAfter = [&](const TaskRecord& t, const OpRecord& op) {
    auto [first, last] = groupEndTimes.equal_range(t.startNs);
    return t.startNs >= op.hostEndNs &&
           std::any_of(first, last, [&](const auto& times) { return t.startNs <= t.endNs && t.endNs <= times.second; });
  };

  std::map<std::string, uint64_t> seqs;
  size_t tasksExpected = 0, proxiesExpected = 0, ops = 0;
  for (const OpEntry& entry : file.ops) {
    const OpRecord& op = entry.record;
    std::vector<Expected> want = expectedTasks(op, seqs);
    if (want.empty()) continue;
    ++ops;
    const std::string name = who + "/" + opName(op.op) + "-seq" + std::to_string(op.seq);
    std::vector<TaskRecord> got = tasksOf[{op.commId, op.seq}];
    tasksExpected += want.size();
    if (!check(name + "/task-count", got.size() == want.size(),
               std::to_string(got.size()) + " tasks joined, " + std::to_string(want.size()) + " expected")) {
      continue;
    }
    std::string bad;
    for (size_t i = 0; i < want.size(); ++i) {
      const Expected& w = want[i];
      const TaskRecord& t = got[i];
      const bool coll = w.kind == TaskKind::kColl;
      bool ok = t.kind == w.kind && w.func == t.func && t.count == w.count && t.datatype == w.datatype &&
                t.rootOrPeer == w.rootOrPeer && t.ncclSeq == w.ncclSeq && (t.flags & kTaskJoined) &&
                t.ncclCommHash == fakeprof::commHash(op.commId) && t.rank == op.rank && t.nranks == nranks &&
                t.nnodes == nranks && t.nChannels == fakeprof::kChannels && t.nWarps == (coll ? fakeprof::kWarps : 0) &&
                std::string(t.algo) == (coll ? algo : "") && std::string(t.proto) == (coll ? proto : "") &&
                // Launched inside the call (kTaskInCall): from the call's start to its end (or, past
                // the tasks held per call, to when the task was written); inside the group's
                // recorded ncclGroupEnd (kTaskInGroupEnd): within that end's times, from its start;
                // else NCCL's launch, one time.
                ((t.flags & kTaskInCall) ? t.startNs == op.hostStartNs && t.endNs >= t.startNs &&
                                               t.endNs <= op.hostEndNs && !(t.flags & kTaskInGroupEnd)
                 : (t.flags & kTaskInGroupEnd) ? launchedInGroupEndAfter(t, op)
                                               : t.startNs >= op.hostStartNs && t.endNs == t.startNs) &&
                // a call outside a group launches its only task inside itself, and a grouped call's
                // tasks come with its ncclGroupEnd (all on this program's one thread)
                (op.groupDepth > 0 || want.size() > 1 || (t.flags & kTaskInCall)) &&
                (op.groupDepth == 0 || (t.flags & kTaskInGroupEnd));
      if (!ok) bad += " [" + describe(t) + " vs " + w.func + " " + std::to_string(w.count) + "]";
      // Its proxy operations: per channel, a coll sends to rank+1 and receives from rank-1; a
      // send / recv moves to / from its peer.
      std::vector<std::tuple<int, int, int>> wantProxy;  // channel, isSend, peer
      for (int c = 0; c < fakeprof::kChannels && proxies; ++c) {
        if (coll) {
          wantProxy.push_back({c, 1, (op.rank + 1) % nranks});
          wantProxy.push_back({c, 0, (op.rank + nranks - 1) % nranks});
        } else {
          wantProxy.push_back({c, w.func == "Send" ? 1 : 0, w.rootOrPeer});
        }
      }
      proxiesExpected += wantProxy.size();
      std::vector<ProxyRecord>& pool = proxiesOf[{op.commId, op.seq}];
      for (auto [c, isSend, peer] : wantProxy) {
        auto it = std::find_if(pool.begin(), pool.end(), [&](const ProxyRecord& p) {
          return p.channel == c && int(p.isSend) == isSend && p.peer == peer && w.func == p.func;
        });
        if (it == pool.end()) {
          bad += " [no proxy ch " + std::to_string(c) + " send " + std::to_string(isSend) + " peer " +
                 std::to_string(peer) + " for " + w.func + "]";
          continue;
        }
        bool pok = it->bytes == fakeprof::opBytes(c, isSend) && it->nSteps == fakeprof::kSteps &&
                   it->stepsDone == fakeprof::kSteps && it->chunkSize == fakeprof::kChunkSize &&
                   (it->flags & kTaskJoined) && it->ncclCommHash == t.ncclCommHash && it->rank == op.rank &&
                   it->startNs >= t.startNs && it->endNs >= it->startNs;
        if (!pok) bad += " [proxy ch " + std::to_string(c) + " bytes " + std::to_string(it->bytes) + "]";
        pool.erase(it);
      }
    }
    check(name + "/fields", bad.empty(), bad);
  }
  check(who + "/ops-seen", ops == 9, std::to_string(ops) + " ops with tasks (9 expected)");
  check(who + "/no-other-tasks", file.tasks.size() == tasksExpected,
        std::to_string(file.tasks.size()) + " task lines, " + std::to_string(tasksExpected) + " expected");
  check(who + "/no-other-proxies", file.proxies.size() == proxiesExpected,
        std::to_string(file.proxies.size()) + " proxy lines, " + std::to_string(proxiesExpected) + " expected");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s <trace dir> <nranks> <algo> <proto> [--no-proxy]\n", argv[0]);
    return 2;
  }
  const int nranks = std::atoi(argv[2]);
  const bool proxies = !(argc > 5 && std::strcmp(argv[5], "--no-proxy") == 0);
  auto set = readTraceDir(argv[1]);
  if (!set.ok()) {
    check("read", false, set.status().message());
  } else {
    check("one-file-per-rank", set->files.size() == size_t(nranks), std::to_string(set->files.size()) + " files");
    for (const TraceFile& file : set->files) checkFile(file, nranks, argv[3], argv[4], proxies);
  }
  return gFailures == 0 ? 0 : 1;
}
