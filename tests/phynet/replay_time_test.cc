// What a replay's clock means (docs/replay_time.md), with ranks as threads: --delay holds a rank
// and the report names it as the rank the others waited for, the wait told apart from moving the
// data; a CPU call time is labelled and never divided by; --pace recorded on a GPU timeline starts
// each op its recorded offset after the previous op started (an op of another communicator does
// not wait for the previous one to end), so communicators overlap as in the job.
#include <map>
#include <vector>

#include "phynet/delay_spec.h"
#include "phynet/replay.h"
#include "phynet/report.h"
#include "tests/catch.h"
#include "tests/phynet/inproc_replay.h"

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
  in.sharedClock = true;  // threads of one process
  in.paced = paced;
  for (const RankReplayResult& r : replay.results) {
    in.timings.push_back(r.timings);
    in.counters.push_back(r.counters);
  }
  return buildReport(in);
}

TEST_CASE("--delay parses ranks, microseconds and every", "[phynet]") {
  auto spec = parseDelaySpec("3,1,3:1000:5");
  REQUIRE(spec.ok());
  CHECK(spec->ranks == std::vector<int>{1, 3});
  CHECK(spec->ns == 1'000'000);
  CHECK(spec->every == 5);
  CHECK(delayOfRank(*spec, 3).ns == 1'000'000);
  CHECK(delayOfRank(*spec, 2).ns == 0);
  CHECK(parseDelaySpec("2:7")->every == 1);
  CHECK_FALSE(checkDelayRanks(*spec, 3).ok());
  CHECK(checkDelayRanks(*spec, 4).ok());
  for (const char* bad : {"3", "3:", "x:10", "3:0", "3:10:0", "3:-5", "3:10:2:1", ":10", "3,,4:10"}) {
    auto parsed = parseDelaySpec(bad);
    CHECK_FALSE(parsed.ok());
    if (!parsed.ok()) CHECK(parsed.status().message().find("--delay") != std::string::npos);
  }
}

TEST_CASE("a delayed rank is named as the rank the others waited for", "[phynet]") {
  const Workload w = worldOf(4, std::vector<WorkOp>(10, allReduce(kWorld, 1024, 4)));
  const auto configOf = [](uint64_t every) {
    return [every](int rank) {
      ReplayConfig c;
      if (rank == 3) c.delay = RankDelay{1'000'000, every};
      return c;
    };
  };
  const ReplayReport every = reportOf(w, testing::replayInThreads(w, configOf(1)));
  REQUIRE(every.rows.size() == 10);
  for (const OpRow& row : every.rows) {
    CHECK(row.lastRank == 3);
    CHECK(row.arrivalWaitUs >= 900);
    CHECK(row.dataUs >= 0);
    CHECK(row.dataUs < row.arrivalWaitUs);                     // a 4 KiB allreduce moves in far less than 1 ms
    CHECK(row.arrivalWaitUs + row.dataUs >= row.timeUs - 1);   // first start to last end holds every member's time
  }
  CHECK(every.straggler.rank == 3);
  CHECK(every.straggler.rowsWaited == 10);
  CHECK(every.straggler.rowsCaused == 10);
  CHECK(every.straggler.meanWaitUs >= 900);
  CHECK(every.straggler.meanWaitUs < 20'000);
  REQUIRE(every.summary.size() == 1);
  CHECK(every.summary[0].lastRank == 3);
  CHECK(every.summary[0].meanArrivalWaitUs >= 900);

  // Every 5th op: ops 0 and 5 of rank 3 are held.
  const ReplayReport fifth = reportOf(w, testing::replayInThreads(w, configOf(5)));
  int held = 0;
  for (const OpRow& row : fifth.rows) held += row.lastRank == 3 && row.arrivalWaitUs >= 900 ? 1 : 0;
  CHECK(held == 2);
  CHECK(fifth.rows[0].arrivalWaitUs >= 900);
  CHECK(fifth.rows[5].arrivalWaitUs >= 900);
}

TEST_CASE("a CPU call time is labelled and never divided by; GPU time is", "[phynet]") {
  WorkOp cpu = allReduce(kWorld, 256, 2), gpu = allReduce(kWorld, 256, 2);
  cpu.recordedNs = 8000;
  cpu.recordedClock = RecordedClock::kCpuCall;
  gpu.recordedNs = 50'000;
  gpu.recordedClock = RecordedClock::kGpu;
  const Workload w = worldOf(2, {cpu, cpu, gpu});
  const ReplayReport r = reportOf(w, testing::replayInThreads(w, ReplayConfig{}));
  REQUIRE(r.rows.size() == 3);
  CHECK(r.recordedClock == "mixed");
  for (int i = 0; i < 2; ++i) {
    CHECK(r.rows[i].recordedClock == RecordedClock::kCpuCall);
    CHECK(r.rows[i].recordedUs == Approx(8));
    CHECK(r.rows[i].ratio == -1);
  }
  CHECK(r.rows[2].recordedClock == RecordedClock::kGpu);
  CHECK(r.rows[2].ratio == Approx(r.rows[2].timeUs / 50));
  REQUIRE(r.summary.size() == 1);
  CHECK(r.summary[0].meanRecordedUs == Approx(50));  // GPU time only
  CHECK(r.summary[0].meanCpuCallUs == Approx(8));
  CHECK_FALSE(r.timeline.captured);  // not every op GPU-timed: no job timeline
}

TEST_CASE("--pace recorded on a GPU timeline keeps the recorded offsets and overlaps communicators", "[phynet]") {
  // GPU times (us): W [0, 2000], W [2100, 4100], side [2100, 2400]: the side op runs under the second W op.
  // 64 MiB W ops: several ms even on a busy machine, while the side op needs the dispatcher only.
  std::vector<WorkOp> ops = {allReduce(kWorld, 1 << 24, 2), allReduce(kWorld, 1 << 24, 2), allReduce(kSide, 1024, 2)};
  const int64_t starts[] = {0, 2'100'000, 2'100'000}, times[] = {2'000'000, 2'000'000, 300'000};
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].issueNs = starts[i];
    ops[i].recordedNs = times[i];
    ops[i].recordedClock = RecordedClock::kGpu;
  }
  const Workload w = worldOf(2, ops);
  ReplayConfig config;
  config.pace = Pace::kRecorded;
  const testing::InProcessReplay replay = testing::replayInThreads(w, config);
  const ReplayReport r = reportOf(w, replay, true);
  for (const RankReplayResult& rank : replay.results) {
    const std::vector<OpTiming>& t = rank.timings;
    CHECK(t[1].startNs >= t[0].endNs);                    // one communicator: one op after the other
    CHECK(t[1].startNs - t[0].startNs >= 2'100'000);      // and not before its recorded offset
    INFO("second W op: " << (t[1].endNs - t[1].startNs) / 1000 << " us; side op after its start: "
                         << (t[2].startNs - t[1].startNs) / 1000 << " us");
    CHECK(t[2].startNs >= t[0].endNs);                    // after the previous op began (it waited for the first) ...
    CHECK(t[2].startNs < t[1].endNs);                     // ... not its end: the side op runs under it
  }
  REQUIRE(r.timeline.captured);
  CHECK(r.timeline.captureOverlapPairs == 2);
  CHECK(r.timeline.replayOverlapPairs == Approx(2));
  REQUIRE(r.timeline.ranks.size() == 2);
  CHECK(r.timeline.ranks[0].capture.commUs == Approx(4300));
  CHECK(r.timeline.ranks[0].capture.exposedUs == Approx(4000));  // busy: [0, 2000] and [2100, 4100]
  CHECK(r.timeline.ranks[0].replay.exposedUs == Approx(r.timeline.ranks[0].replay.spanUs - 100));
}

}  // namespace
}  // namespace nshim::phynet
