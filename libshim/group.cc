// Thread-local group state and the execution of a group's queued work.
#include "libshim/group.h"

#include <vector>

#include "libshim/errors.h"
#include "libshim/task_runner.h"

namespace nshim {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<CommTask> tasks;
  Status firstError;
};

thread_local GroupState tGroup;

// Runs one communicator's tasks in order under its operation lock. The first failure is recorded
// on the communicator and ends its queue.
Status runCommTasks(ShimComm& comm, const std::vector<CommTask*>& tasks) {
  std::lock_guard<std::mutex> lock(comm.operationMutex());
  std::vector<P2POp> batch;
  size_t i = 0;
  while (i < tasks.size()) {
    CommTask& task = *tasks[i];
    if (task.needsConnected) {
      Status usable = comm.checkUsable();
      if (!usable.ok()) return withContext(usable, task.fn);
    }
    Status status;
    if (task.p2p) {
      batch.clear();
      const char* fn = task.fn;
      while (i < tasks.size() && tasks[i]->p2p) batch.push_back(*tasks[i++]->p2p);
      if (batch.size() > 1) fn = "ncclSend/ncclRecv group";
      status = runPointToPoint(comm.engine(), batch);
      if (!status.ok()) status = withContext(status, fmt::format("{} on {}", fn, comm.describe()));
    } else {
      status = task.run(comm);
      ++i;
      if (!status.ok()) status = withContext(status, fmt::format("{} on {}", task.fn, comm.describe()));
    }
    if (!status.ok()) {
      comm.recordFailure(status);
      return status;
    }
  }
  return Status::Ok();
}

// Splits the queue by communicator (first-use order), keeping issue order within each.
Status runTasks(std::vector<CommTask>& tasks) {
  std::vector<ShimComm*> comms;
  std::vector<std::vector<CommTask*>> perComm;
  for (CommTask& task : tasks) {
    size_t index = 0;
    while (index < comms.size() && comms[index] != task.comm) ++index;
    if (index == comms.size()) {
      comms.push_back(task.comm);
      perComm.emplace_back();
    }
    perComm[index].push_back(&task);
  }
  std::vector<Status> results(comms.size());
  std::vector<std::function<void()>> jobs;
  jobs.reserve(comms.size());
  for (size_t i = 0; i < comms.size(); ++i) {
    jobs.emplace_back([&, i] { results[i] = runCommTasks(*comms[i], perComm[i]); });
  }
  runConcurrently(jobs);
  for (Status& status : results) {
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

}  // namespace

void groupStart() { ++tGroup.depth; }

bool inGroup() { return tGroup.depth > 0; }

Status groupEnd() {
  if (tGroup.depth == 0) {
    return NS_ERROR(Code::kInvalidUsage, "ncclGroupEnd: no matching ncclGroupStart on this thread");
  }
  if (--tGroup.depth > 0) return Status::Ok();
  std::vector<CommTask> tasks = std::move(tGroup.tasks);
  tGroup.tasks.clear();
  Status firstError = std::move(tGroup.firstError);
  tGroup.firstError = Status();
  // A communicator destroyed while its work was queued: nothing in the group runs (its memory, and
  // perhaps another communicator's, is where the queue points).
  for (CommTask& task : tasks) {
    if (!firstError.ok()) break;
    if (ShimComm::fromHandle(task.handle) == nullptr) {
      firstError = NS_ERROR(Code::kInvalidUsage, "{}: its communicator {} was destroyed before ncclGroupEnd", task.fn,
                            task.handle);
    }
  }
  if (!firstError.ok()) {
    // Deferred inits never ran: their communicators stay unusable and report why.
    for (CommTask& task : tasks) {
      ShimComm* comm = ShimComm::fromHandle(task.handle);
      if (!task.needsConnected && comm != nullptr) comm->failSetup(firstError);
    }
    return withContext(firstError, "ncclGroupEnd: a call in the group failed, nothing in the group was run");
  }
  return runTasks(tasks);
}

Status submit(CommTask task) {
  task.handle = task.comm->handle();
  if (tGroup.depth > 0) {
    tGroup.tasks.push_back(std::move(task));
    return Status::Ok();
  }
  ShimComm& comm = *task.comm;
  std::vector<CommTask*> one{&task};
  return runCommTasks(comm, one);
}

void noteGroupError(const Status& status) {
  if (tGroup.depth > 0 && tGroup.firstError.ok()) tGroup.firstError = status;
}

}  // namespace nshim
