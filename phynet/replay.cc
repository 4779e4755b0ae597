// One rank's replay: batches, executors, the paced dispatcher thread and the watching loop.
#include "phynet/replay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "collectives/collectives.h"
#include "collectives/pxn_relay.h"
#include "common/peak_rss.h"
#include "phynet/comm_executor.h"
#include "phynet/memory_plan.h"
#include "phynet/stall_report.h"
#include "workload/iteration_period.h"
#include "workload/timeline_figures.h"
#include "workload/traffic_model.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

constexpr int64_t kProgressEveryNs = 2'000'000'000;

void sleepUntil(int64_t atNs, const FailureSlot& failure) {
  while (!failure.failed()) {
    int64_t left = atNs - nowNs();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(left, 50'000'000)));
  }
}

// --pace recorded: the wait before a batch whose first op is `first`: the recorded gap between
// issues when both are known (same iteration), else the compute time recorded before this op.
// On a GPU timeline (every op GPU-timed) the gap is between GPU starts, counted from the previous
// batch's start in the replay (dispatch() waits for it); elsewhere between host calls, counted
// from the previous batch's dispatch.
int64_t paceGapNs(const WorkOp* previous, const WorkOp& first) {
  const bool haveIssue = previous && first.issueNs >= 0 && previous->issueNs >= 0 && first.issueNs >= previous->issueNs;
  return haveIssue ? first.issueNs - previous->issueNs : std::max<int64_t>(first.computeNs, 0);
}

// Every wait the dispatcher will pace (the first two iterations hold every distinct one) must end
// within --timeout: the peers wait for this rank's next op no longer than that, and no wait of a
// replay may outlast it. A longer one is refused before anything is sent.
Status checkPacing(const std::vector<WorkOp>& ops, const std::vector<std::vector<uint32_t>>& batches,
                   const ReplayConfig& config, int globalRank) {
  if (config.pace != Pace::kRecorded) return Status::Ok();
  const int64_t limitNs = static_cast<int64_t>(config.timeoutSeconds * 1e9);
  const WorkOp* previous = nullptr;
  for (int it = 0; it < std::min(config.iterations, 2); ++it) {
    for (const std::vector<uint32_t>& batch : batches) {
      const WorkOp& first = ops[batch.front()];
      const int64_t gap = paceGapNs(previous, first);
      if (gap > limitNs) {
        return NS_ERROR(Code::kInvalidArgument,
                        "rank {}: --pace recorded would wait {:.6g} s before {} ({}), "
                        "longer than --timeout {:g} s, the deadline of every wait (no operation was replayed): raise "
                        "--timeout, or replay with --pace fast",
                        globalRank, gap * 1e-9, describeOp(first), first.source, config.timeoutSeconds);
      }
      previous = &first;
    }
  }
  return Status::Ok();
}

// A batch's recorded end on the capture's GPU timeline (issueNs + recordedNs: the same origin).
int64_t recordedEndNs(const std::vector<WorkOp>& ops, const std::vector<uint32_t>& batch) {
  int64_t end = 0;
  for (uint32_t i : batch) end = std::max(end, ops[i].issueNs + std::max<int64_t>(ops[i].recordedNs, 0));
  return end;
}

bool onGpuTimeline(const std::vector<WorkOp>& ops) {
  std::vector<OpInterval> unused;
  return capturedGpuTimeline(ops, &unused);
}

// Walks every iteration's batches in issue order and queues them on their executors.
// Repetitions of the workload are fenced like training steps: iteration i+1 is issued once every op
// of iteration i has completed on this rank (no cross-rank barrier), which also bounds the queues.
// --pace recorded on a GPU timeline reproduces the job's: a batch that began after the previous one
// ended in the capture is queued its recorded gap after the previous one ends here (a collective ends
// at once on all its ranks, so the ranks realign there whatever their first calls did), and one that
// began while the previous ran its recorded offset after the previous one started (or later, when
// that one started late); it runs as soon as the previous op of its communicator is done, and
// batches of other communicators run meanwhile. `started` and `finished` (one per batch on a GPU
// timeline, else empty) are the caller's: executors write them, and they outlive this function.
void dispatch(const std::vector<WorkOp>& ops, const std::vector<std::vector<uint32_t>>& batches,
              std::map<uint64_t, std::unique_ptr<CommExecutor>>& executors, const ReplayConfig& config,
              const ExecutorShared& shared, std::atomic<uint64_t>& submitted,
              std::vector<std::atomic<int64_t>>& started, std::vector<std::atomic<int64_t>>& finished) {
  const FailureSlot& failure = *shared.failure;
  int64_t lastIssue = nowNs();
  const WorkOp* previous = nullptr;
  const bool gpuTimeline = !started.empty();
  for (int it = 0; it < config.iterations && !failure.failed(); ++it) {
    const uint64_t issued = submitted.load(std::memory_order_acquire);
    auto fenceDone = [&] { return failure.failed() || shared.opsDone->load(std::memory_order_acquire) >= issued; };
    while (!shared.progress->waitFor(fenceDone, 100'000'000)) {}  // the watching thread's stall check bounds this wait
    for (std::atomic<int64_t>& s : started) s.store(0, std::memory_order_relaxed);  // the last iteration is done
    for (std::atomic<int64_t>& s : finished) s.store(0, std::memory_order_relaxed);
    for (size_t b = 0; b < batches.size(); ++b) {
      if (failure.failed()) break;
      const std::vector<uint32_t>& batch = batches[b];
      const WorkOp& first = ops[batch.front()];
      if (gpuTimeline && b > 0) {
        const int64_t previousEnd = recordedEndNs(ops, batches[b - 1]);
        const bool afterEnd = first.issueNs >= previousEnd;  // the capture's: no overlap with the previous batch
        std::atomic<int64_t>& anchor = afterEnd ? finished[b - 1] : started[b - 1];
        auto reachedOrFailed = [&] { return failure.failed() || anchor.load(std::memory_order_acquire) != 0; };
        while (!shared.progress->waitFor(reachedOrFailed, 100'000'000)) {}  // bounded by the stall check, as the fence
        const int64_t offset = afterEnd ? first.issueNs - previousEnd       // GPU end to start
                                        : std::max<int64_t>(0, first.issueNs - previous->issueNs);  // GPU starts
        sleepUntil(anchor.load(std::memory_order_acquire) + offset, failure);
      } else if (config.pace == Pace::kRecorded) {
        sleepUntil(lastIssue + paceGapNs(previous, first), failure);  // within --timeout: checkPacing
      }
      lastIssue = nowNs();
      previous = &first;
      submitted.fetch_add(batch.size(), std::memory_order_acq_rel);
      executors.at(first.commId)
          ->submit(Batch{static_cast<uint32_t>(it), batch, gpuTimeline ? &started[b] : nullptr,
                         gpuTimeline ? &finished[b] : nullptr});
    }
  }
  for (auto& [id, executor] : executors) executor->close();
}

void addCounters(const std::vector<WorkOp>& ops, const Workload& workload, int globalRank, int iterations,
                 uint64_t capBytes, std::map<uint64_t, std::unique_ptr<Communicator>>& comms, RankCounters* counters) {
  const CollectiveOptions& options = comms.empty() ? CollectiveOptions{} : comms.begin()->second->options();
  counters->peers.assign(static_cast<size_t>(workload.worldSize), PeerTraffic{});
  const uint64_t repeats = static_cast<uint64_t>(iterations);
  for (const WorkOp& op : ops) {
    const CommGroup* group = workload.findComm(op.commId);
    counters->opBytes += op.bytes * repeats;
    const int nranks = static_cast<int>(group->members.size());
    const PieceSplit split = splitToCap(op, nranks, capBytes);  // the model follows the pieces that ran
    auto comm = comms.find(op.commId);
    const NodeLayout* nodes = comm == comms.end() ? nullptr : &comm->second->nodes();
    for (uint64_t k = 0; k < split.pieces; ++k) {
      forEachModelSend(
          pieceOf(op, split, k, nranks), commRankOf(*group, globalRank), nranks, options,
          [&](int peer, uint64_t bytes) {
            counters->modelSent += bytes * repeats;
            counters->peers[group->members[peer]].model += bytes * repeats;
          },
          nodes);
    }
  }
  for (auto& [id, comm] : comms) {
    const CommGroup* group = workload.findComm(id);
    for (int peer = 0; peer < comm->nranks(); ++peer) {
      PeerBytes bytes = comm->transport().peerBytes(peer);
      if (const PxnRelay* relay = comm->relay()) {  // --pxn: a trace's send/recv through relays
        const PeerBytes relayed = relay->peerBytes(peer);
        bytes.sent += relayed.sent;
        bytes.received += relayed.received;
        bytes.sentWire += relayed.sentWire;
        bytes.sentMessages += relayed.sentMessages;
        bytes.sendLinks += relayed.sendLinks;
      }
      counters->wireSent += bytes.sent;
      counters->wireReceived += bytes.received;
      counters->wireZeroCopy += bytes.receivedZeroCopy;
      if (group == nullptr || peer == comm->rank()) continue;
      PeerTraffic& to = counters->peers[group->members[peer]];
      to.sent += bytes.sent;
      to.wire += bytes.sentWire;
      to.messages += bytes.sentMessages;
      to.links += bytes.sendLinks;
    }
  }
}

}  // namespace

std::vector<std::vector<uint32_t>> issueBatches(const std::vector<WorkOp>& ops) {
  std::vector<std::vector<uint32_t>> batches;
  size_t i = 0;
  while (i < ops.size()) {
    size_t end = i + 1;
    if (ops[i].group != 0) {
      while (end < ops.size() && ops[end].group == ops[i].group) ++end;
    }
    std::vector<uint64_t> order;  // communicators in first-appearance order
    for (size_t k = i; k < end; ++k) {
      if (std::find(order.begin(), order.end(), ops[k].commId) == order.end()) order.push_back(ops[k].commId);
    }
    for (uint64_t comm : order) {
      std::vector<uint32_t> batch;
      for (size_t k = i; k < end; ++k) {
        if (ops[k].commId == comm) batch.push_back(static_cast<uint32_t>(k));
      }
      batches.push_back(std::move(batch));
    }
    i = end;
  }
  return batches;
}

Result<RankReplayResult> replayRank(const Workload& workload, int globalRank,
                                    std::map<uint64_t, std::unique_ptr<Communicator>>& comms,
                                    const ReplayConfig& config) {
  const std::vector<WorkOp>& ops = workload.ranks.at(globalRank).ops;
  const std::vector<std::vector<uint32_t>> batches = issueBatches(ops);
  NS_RETURN_IF_ERROR(checkPacing(ops, batches, config, globalRank));
  const uint64_t cap = config.verify ? kNoCap : config.maxBufferBytes;
  const CollectiveOptions collectives = comms.empty() ? CollectiveOptions{} : comms.begin()->second->options();
  const RankMemoryPlan plan = planRankMemory(workload, globalRank, config.verify, cap, collectives);
  for (const auto& [id, need] : plan.arenas) {
    if (!comms.count(id)) return NS_ERROR(Code::kInternal, "rank {}: no communicator {:#x}", globalRank, id);
  }

  RankReplayResult result;
  const uint64_t total = static_cast<uint64_t>(ops.size()) * static_cast<uint64_t>(config.iterations);
  result.timings.resize(total);
  FailureSlot failure;
  ProgressSignal progress;
  std::atomic<uint64_t> done{0}, submitted{0};
  ExecutorShared shared{&ops,      &result.timings, &done, &failure,
                        &progress, config.verify,   cap,   config.verify ? 0 : config.stagingBytes};
  std::atomic<uint64_t> batchesStarted{0};
  shared.delayNs = config.delayNs;
  shared.delayEvery = std::max(config.delayEvery, 1);
  shared.batchesStarted = &batchesStarted;
  // When each batch began, on a GPU timeline (dispatch): written by the executors, so it lives longer.
  const size_t paced = config.pace == Pace::kRecorded && onGpuTimeline(ops) ? batches.size() : 0;
  std::vector<std::atomic<int64_t>> batchStarts(paced), batchEnds(paced);
  std::map<uint64_t, std::unique_ptr<CommExecutor>> executors;
  for (const auto& [id, need] : plan.arenas) {
    executors[id] = std::make_unique<CommExecutor>(*workload.findComm(id), *comms[id], shared, need);
  }

  // The engine's scratch too, so that no reduction allocates (and registers) memory while timed.
  for (const auto& [id, bytes] : plan.scratch) comms.at(id)->scratch(bytes);
  result.counters.plannedBufferBytes = plan.totalBytes;
  result.counters.readyNs = nowNs();
  if (config.startTogether) config.startTogether();
  result.counters.runStartNs = nowNs();
  std::thread dispatcher([&] { dispatch(ops, batches, executors, config, shared, submitted, batchStarts, batchEnds); });
  int64_t nextProgress = result.counters.runStartNs + kProgressEveryNs;
  uint64_t lastDone = 0;
  int64_t lastChange = nowNs();
  std::vector<const CommExecutor*> watched;
  for (const auto& [id, executor] : executors) watched.push_back(executor.get());
  StallReporter stalls(globalRank, ops, std::move(watched));
  while (done.load(std::memory_order_acquire) < total && !failure.failed()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const int64_t now = nowNs();
    const uint64_t d = done.load(std::memory_order_acquire);
    if (d != lastDone || submitted.load(std::memory_order_acquire) == d) {
      lastDone = d;
      lastChange = now;
    } else if (now - lastChange > static_cast<int64_t>(config.stallSeconds * 1e9)) {
      failure.set(NS_ERROR(Code::kTimeout, "rank {}: no operation completed for {:.0f} s ({} of {} done, {} queued)",
                           globalRank, config.stallSeconds, d, total, submitted.load() - d));
      progress.notify();
    }
    stalls.tick(now, lastChange);  // after a few seconds without progress: who waits on whom
    if (config.showProgress && now >= nextProgress) {
      const double still = (now - lastChange) * 1e-9;
      std::fprintf(
          stderr, "phynet: progress: rank %d: %llu/%llu ops (%.1f%%) after %.1f s%s\n", globalRank,
          static_cast<unsigned long long>(d), static_cast<unsigned long long>(total), total ? 100.0 * d / total : 100.0,
          (now - result.counters.runStartNs) * 1e-9,
          now - lastChange >= kStallReportAfterNs ? fmt::format(", none completed for {:.0f} s", still).c_str() : "");
      nextProgress = now + kProgressEveryNs;
    }
  }
  if (failure.failed()) {
    // Unblock every executor (their waits fail at once), then collect the threads.
    for (auto& [id, comm] : comms) comm->transport().abort("replay failed on this rank");
  }
  dispatcher.join();
  for (auto& [id, executor] : executors) executor->join();
  if (failure.failed()) return failure.first();

  result.counters.ops = done.load();
  result.counters.runEndNs = result.counters.runStartNs;
  for (const OpTiming& t : result.timings) result.counters.runEndNs = std::max(result.counters.runEndNs, t.endNs);
  addCounters(ops, workload, globalRank, config.iterations, cap, comms, &result.counters);
  if (const IterationPeriod steps = findIterationPeriod(workload.ranks.at(globalRank)); steps.found) {
    result.counters.stepPeriod = static_cast<int64_t>(steps.period);
    result.counters.stepFirst = static_cast<int64_t>(steps.firstBoundary);
    result.counters.stepCount = static_cast<int64_t>(steps.iterations);
  }
  for (auto& [id, executor] : executors) result.counters.bytesVerified += executor->bytesChecked();
  result.counters.peakRssBytes = peakResidentBytes();
  return result;
}

}  // namespace nshim::phynet
