// What a replay's clock means (docs/replay_time.md), with ranks as threads: a capture that is not
// GPU-timed has no timeline to score and no ratio; --pace recorded on a GPU timeline starts an op
// that overlapped the previous one its recorded offset after the previous op started (an op of
// another communicator does not wait for the previous one to end), so communicators overlap as in
// the job, and one that followed it its recorded gap after the previous op ended, so that ranks
// realign at every collective.
#include <map>
#include <vector>

#include "phynet/replay.h"
#include "phynet/report.h"
#include "tests/catch.h"
#include "tests/phynet/inproc_replay.h"
#include "tests/test_util.h"

namespace nshim::phynet {
namespace {

constexpr uint64_t kWorld = 1, kSide = 2;

WorkOp allReduce(uint64_t comm, uint64_t count, int nranks) {
  WorkOp op;
  op.commId = comm;
  op.kind = OpKind::kAllReduce;
  op.count = count;
  op.type = DataType::kFloat32;
  op.bytes = opBytes(op.kind, count, op.type, nranks);
  return op;
}

Workload worldOf(int nranks, const std::vector<WorkOp>& ops) {
  Workload w;
  w.worldSize = nranks;
  std::vector<int> members;
  for (int r = 0; r < nranks; ++r) members.push_back(r);
  w.comms = {{kWorld, members, "world"}, {kSide, members, "side"}};
  w.indexComms();
  w.ranks.resize(nranks);
  for (int g = 0; g < nranks; ++g) {
    w.ranks[g].globalRank = g;
    w.ranks[g].ops = ops;
    std::map<uint64_t, uint64_t> seq;
    for (WorkOp& op : w.ranks[g].ops) op.seq = seq[op.commId]++;
  }
  return w;
}

ReplayReport reportOf(const Workload& w, const testing::InProcessReplay& replay, bool paced = false) {
  REQUIRE(replay.errors == std::vector<std::string>(w.worldSize, ""));
  ReportInput in;
  in.workload = &w;
  in.paced = paced;
  for (const RankReplayResult& r : replay.results) {
    in.timings.push_back(r.timings);
    in.counters.push_back(r.counters);
  }
  return buildReport(in);
}

TEST_CASE("a capture not GPU-timed on every op has no job timeline to score", "[phynet]") {
  WorkOp cpu = allReduce(kWorld, 256, 2), gpu = allReduce(kWorld, 256, 2);
  cpu.recordedNs = 8000;
  cpu.recordedClock = RecordedClock::kCpuCall;
  gpu.recordedNs = 50'000;
  gpu.recordedClock = RecordedClock::kGpu;
  Workload w = worldOf(2, {cpu, cpu, gpu});
  w.recordedClock = RecordedClock::kMixed;
  const ReplayReport r = reportOf(w, testing::replayInThreads(w, ReplayConfig{}));
  REQUIRE(r.rows.size() == 3);
  for (const OpRow& row : r.rows) CHECK(row.ratio == -1);  // a CPU call time is never divided by
  CHECK_FALSE(r.timeline.captured);
  CHECK(r.timeline.note.find("1 of its 3 ops are GPU-timed") != std::string::npos);
}

TEST_CASE("--pace recorded on a GPU timeline keeps the recorded offsets and overlaps communicators", "[phynet]") {
  // GPU times (us): W [0, 2000], W [2100, 4100], side [2200, 2500]: the side op runs under the second W op,
  // issued 100 us after it (so even on a loaded machine it starts while the 64 MiB op is in flight).
  // 64 MiB W ops: several ms even on a busy machine, while the side op needs the dispatcher only.
  std::vector<WorkOp> ops = {allReduce(kWorld, 1 << 24, 2), allReduce(kWorld, 1 << 24, 2), allReduce(kSide, 1024, 2)};
  const int64_t starts[] = {0, 2'100'000, 2'200'000}, times[] = {2'000'000, 2'000'000, 300'000};
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].issueNs = starts[i];
    ops[i].recordedNs = times[i];
    ops[i].recordedClock = RecordedClock::kGpu;
  }
  Workload w = worldOf(2, ops);
  w.recordedClock = RecordedClock::kGpu;
  ReplayConfig config;
  config.pace = Pace::kRecorded;
  const testing::InProcessReplay replay = testing::replayInThreads(w, config);
  const ReplayReport r = reportOf(w, replay, true);
  for (const RankReplayResult& rank : replay.results) {
    const std::vector<OpTiming>& t = rank.timings;
    CHECK(t[1].startNs >= t[0].endNs);                // one communicator: one op after the other
    CHECK(t[1].startNs - t[0].startNs >= 2'100'000);  // and not before its recorded offset
    INFO("second W op: " << (t[1].endNs - t[1].startNs) / 1000
                         << " us; side op after its start: " << (t[2].startNs - t[1].startNs) / 1000 << " us");
    CHECK(t[2].startNs >= t[0].endNs);  // after the previous op began (it waited for the first) ...
    // ... not its end: the side op runs under it. A matter of scheduling: under ASan on a loaded
    // machine (the sanitizer suite) the side op's thread may wake after the 64 MiB op, so there it
    // is the memory that is checked, not the overlap.
    if (!nshim::testing::runningUnderAddressSanitizer()) CHECK(t[2].startNs < t[1].endNs);
  }
  REQUIRE(r.timeline.captured);
  CHECK(r.timeline.captureOverlapPairs == 2);
  if (!nshim::testing::runningUnderAddressSanitizer()) CHECK(r.timeline.replayOverlapPairs == Approx(2));
  REQUIRE(r.timeline.ranks.size() == 2);
  CHECK(r.timeline.ranks[0].capture.commUs == Approx(4300));
  CHECK(r.timeline.ranks[0].capture.exposedUs == Approx(4000));  // busy: [0, 2000] and [2100, 4100]
  CHECK(r.timeline.ranks[0].replay.exposedUs == Approx(r.timeline.ranks[0].replay.spanUs - 100));
}

TEST_CASE("--pace recorded realigns the ranks at a collective's end, whatever their first calls did", "[phynet]") {
  // Rank 0 reached the first allreduce 7.9 ms before rank 1 (GPU times from each rank's first op:
  // rank 0 [0, 8000] us, rank 1 [0, 100] us: both ended together); both issued the second 500 us
  // after it ended. Paced start to start, rank 1 would issue the second 8 ms before rank 0 and wait
  // for it there; anchored on the first one's end, neither waits.
  std::vector<WorkOp> ops = {allReduce(kWorld, 1024, 2), allReduce(kWorld, 1024, 2)};
  Workload w = worldOf(2, ops);
  w.recordedClock = RecordedClock::kGpu;
  const int64_t firstTimes[] = {8'000'000, 100'000};
  for (int g = 0; g < 2; ++g) {
    std::vector<WorkOp>& mine = w.ranks[g].ops;
    mine[0].issueNs = 0;
    mine[0].recordedNs = firstTimes[g];
    mine[1].issueNs = firstTimes[g] + 500'000;
    mine[1].recordedNs = 100'000;
    for (WorkOp& op : mine) op.recordedClock = RecordedClock::kGpu;
  }
  ReplayConfig config;
  config.pace = Pace::kRecorded;
  const testing::InProcessReplay replay = testing::replayInThreads(w, config);
  (void)reportOf(w, replay, true);
  for (const RankReplayResult& rank : replay.results) {
    const std::vector<OpTiming>& t = rank.timings;
    INFO("gap after the first: " << (t[1].startNs - t[0].endNs) / 1000 << " us, second op "
                                 << (t[1].endNs - t[1].startNs) / 1000 << " us");
    CHECK(t[1].startNs - t[0].endNs >= 500'000);   // the recorded gap, from the end
    CHECK(t[1].endNs - t[1].startNs < 4'000'000);  // no rank waits the other's 7.9 ms head start
  }
}

}  // namespace
}  // namespace nshim::phynet
