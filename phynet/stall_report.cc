// Stall lines (stall_report.h): what each blocked executor of this rank waits for, rate-limited.
#include "phynet/stall_report.h"

#include "workload/workload_transform.h"

namespace nshim::phynet {

std::string stallLine(int globalRank, double waitedSeconds, const CommGroup& group, const WorkOp& op,
                      uint32_t iteration, uint32_t batchOps, const WaitNote::Snapshot& wait) {
  const bool known = wait.peer >= 0 && wait.peer < static_cast<int>(group.members.size());
  const std::string peer =
      known ? fmt::format("rank {}", group.members[wait.peer]) : fmt::format("communicator rank {}", wait.peer);
  return fmt::format("phynet: rank {} waits {:.1f} s on comm {} {} seq {} (iteration {}{}{}) for {} ({} it)",
                     globalRank, waitedSeconds, commName(group), opKindName(op.kind), op.seq, iteration,
                     op.source.empty() ? "" : ", " + op.source.str(),
                     batchOps > 1 ? fmt::format(", first of a group of {} ops", batchOps) : std::string(), peer,
                     wait.isSend ? "a send to" : "a receive from");
}

StallReporter::StallReporter(int globalRank, const std::vector<WorkOp>& ops, std::vector<const CommExecutor*> executors,
                             FILE* out)
    : globalRank_(globalRank), ops_(ops), executors_(std::move(executors)), shown_(executors_.size()), out_(out) {}

int StallReporter::tick(int64_t now, int64_t lastProgressNs) {
  if (now - lastProgressNs < kStallReportAfterNs) return 0;
  int printed = 0;
  for (size_t i = 0; i < executors_.size(); ++i) {
    const CommExecutor& executor = *executors_[i];
    const std::optional<CommExecutor::Running> running = executor.running();
    const WaitNote::Snapshot wait = executor.comm().transport().waitNote().read();
    if (!running || wait.peer < 0 || now - wait.sinceNs < kStallReportAfterNs) continue;
    if (running->firstOp >= ops_.size()) continue;
    const uint64_t key = uint64_t{running->iteration} << 32 | running->firstOp;
    const int peer = wait.isSend ? ~wait.peer : wait.peer;
    Shown& shown = shown_[i];
    if (shown.key == key && shown.peer == peer && now - shown.atNs < kStallRepeatEveryNs) continue;
    shown = Shown{key, peer, now};
    const std::string line = stallLine(globalRank_, (now - wait.sinceNs) * 1e-9, executor.group(),
                                       ops_[running->firstOp], running->iteration, running->ops, wait);
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    ++printed;
  }
  return printed;
}

}  // namespace nshim::phynet
