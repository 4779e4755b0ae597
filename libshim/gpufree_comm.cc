// The GPU-free backend's communicators (gpufree_backend.h): creation (TCP through a unique id,
// in-process for ncclCommInitAll, ncclCommSplit), teardown, queries and buffer registration.
#include <atomic>
#include <cstddef>
#include <cstring>

#include "common/log.h"
#include "libshim/comm_factory.h"
#include "libshim/errors.h"
#include "libshim/gpufree_backend.h"
#include "libshim/group.h"
#include "libshim/split.h"
#include "libshim/validate.h"
#include "trace/comm_id.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim {
namespace {

static_assert(kSplitNoColor == NCCL_SPLIT_NOCOLOR, "split color constant");
static_assert(kNumBuiltinOps == ncclNumOps, "built-in reduction operators");
static_assert(kNumDataTypes == ncclNumTypes, "data types");
static_assert(sizeof(UniqueId) == sizeof(ncclUniqueId), "unique id size");

constexpr unsigned int kConfigMagic = 0xcafebeef;

// The blocking flag of a config (NCCL_CONFIG_INITIALIZER leaves it undefined: blocking).
Result<bool> blockingFrom(const char* fn, const ncclConfig_t* config, bool fallback) {
  if (config == nullptr) return fallback;
  if (config->magic != kConfigMagic || config->size < offsetof(ncclConfig_t, blocking) + sizeof(int)) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: config was not initialised with NCCL_CONFIG_INITIALIZER (magic {:#x}, "
                    "size {})",
                    fn, config->magic, config->size);
  }
  if (config->blocking == NCCL_CONFIG_UNDEF_INT) return fallback;
  if (config->blocking != 0 && config->blocking != 1) {
    return NS_ERROR(Code::kInvalidArgument, "{}: config->blocking must be 0 or 1, not {}", fn, config->blocking);
  }
  return config->blocking == 1;
}

void noteLogRank(int rank) {
  static std::atomic<bool> set{false};
  if (!set.exchange(true)) setLogRank(rank);
}

// Non-blocking communicators complete every call before returning, so they never report
// ncclInProgress; the flag is only remembered.
Status connectTask(ShimComm& comm, const UniqueId& id) {
  Result<std::unique_ptr<Communicator>> engine = connectCommunicator(id, comm.rank(), comm.nranks());
  if (!engine.ok()) {
    comm.failSetup(engine.status());
    return engine.status();
  }
  return comm.attach(std::move(engine).value());
}

// ncclCommInitRank, ncclCommInitRankConfig and ncclCommInitRankScalable; `fn` names the one called.
ncclResult_t initRankFromId(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, ncclConfig_t* config,
                            const char* fn) {
  bool blocking = true;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkNotNull(fn, "comm", out));
    if (nranks < 1) return NS_ERROR(Code::kInvalidArgument, "{}: nranks {} must be at least 1", fn, nranks);
    NS_RETURN_IF_ERROR(checkRank(fn, "rank", rank, nranks));
    NS_ASSIGN_OR_RETURN(blocking, blockingFrom(fn, config, true));
    return Status::Ok();
  }();
  if (!status.ok()) {
    noteGroupError(status);
    return reportError(status);
  }
  UniqueId uid;
  std::memcpy(uid.bytes, id.internal, sizeof(uid.bytes));
  const uint64_t commId = trace::commIdFromUniqueId(uid.bytes, sizeof(uid.bytes));
  Result<std::unique_ptr<ShimComm>> created =
      ShimComm::create(rank, nranks, /*device=*/0, CommFabric::kTcp, commId, blocking);
  if (!created.ok()) {
    noteGroupError(created.status());
    return reportError(withContext(created.status(), fn));
  }
  ShimComm* comm = created->release();  // owned through its handle until ncclCommDestroy
  *out = static_cast<ncclComm_t>(comm->handle());
  noteLogRank(rank);
  CommTask task;
  task.comm = comm;
  task.fn = fn;
  task.needsConnected = false;
  task.run = [uid](ShimComm& self) { return connectTask(self, uid); };
  // Inside a group the connection is made at the outermost ncclGroupEnd, concurrently with the
  // other communicators of the group (one thread may create every rank of a communicator).
  status = submit(std::move(task));
  if (!status.ok()) {
    delete comm;
    *out = nullptr;
    return reportError(status);
  }
  NS_INFO("{}: {} {}", fn, comm->describe(), inGroup() ? "queued until ncclGroupEnd" : "connected");
  return ncclSuccess;
}

}  // namespace

ncclResult_t gpufree::ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return reportError(checkNotNull("ncclGetUniqueId", "uniqueId", id));
  Result<UniqueId> created = createUniqueId();
  if (!created.ok()) return reportError(withContext(created.status(), "ncclGetUniqueId"));
  std::memcpy(id->internal, created->bytes, sizeof(id->internal));
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommInitRankScalable(ncclComm_t* out, int nranks, int rank, int nIds, ncclUniqueId* ids,
                                               ncclConfig_t* config) {
  const char* fn = "ncclCommInitRankScalable";
  Status status = checkNotNull(fn, "commIds", ids);
  if (status.ok() && nIds < 1) status = NS_ERROR(Code::kInvalidArgument, "{}: nId {} must be at least 1", fn, nIds);
  if (!status.ok()) {
    noteGroupError(status);
    return reportError(status);
  }
  // One bootstrap root serves any number of ranks here: every rank uses the first id.
  return initRankFromId(out, nranks, ids[0], rank, config, fn);
}

ncclResult_t gpufree::ncclCommInitRank(ncclComm_t* out, int nranks, ncclUniqueId id, int rank) {
  return initRankFromId(out, nranks, id, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t gpufree::ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId id, int rank,
                                             ncclConfig_t* config) {
  return initRankFromId(out, nranks, id, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t gpufree::ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  const char* fn = "ncclCommInitAll";
  Status status = checkNotNull(fn, "comm", comms);
  if (status.ok() && ndev < 1) status = NS_ERROR(Code::kInvalidArgument, "{}: ndev {} must be at least 1", fn, ndev);
  for (int r = 0; status.ok() && devlist != nullptr && r < ndev; ++r) {
    if (devlist[r] < 0)
      status = NS_ERROR(Code::kInvalidArgument, "{}: devlist[{}] = {} is negative", fn, r, devlist[r]);
  }
  if (!status.ok()) return reportError(status);
  std::vector<std::unique_ptr<Transport>> transports = createInProcessTransports(ndev);
  const uint64_t commId = trace::freshCommId();
  std::vector<std::unique_ptr<ShimComm>> created;
  for (int r = 0; r < ndev; ++r) {
    Result<std::unique_ptr<ShimComm>> comm =
        ShimComm::create(r, ndev, devlist != nullptr ? devlist[r] : r, CommFabric::kInProcess, commId, true);
    if (!comm.ok()) return reportError(withContext(comm.status(), fn));  // the ones made so far are freed
    (void)(*comm)->attach(makeCommunicator(std::move(transports[r])));   // cannot fail: nothing aborted it yet
    created.push_back(std::move(comm).value());
  }
  for (int r = 0; r < ndev; ++r) comms[r] = static_cast<ncclComm_t>(created[r].release()->handle());
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommSplit(ncclComm_t handle, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const char* fn = "ncclCommSplit";
  ShimComm* parent = nullptr;
  bool blocking = true;
  Status status = [&]() -> Status {
    NS_ASSIGN_OR_RETURN(parent, checkComm(fn, handle));
    NS_RETURN_IF_ERROR(checkNotNull(fn, "newcomm", newcomm));
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
      return NS_ERROR(Code::kInvalidArgument, "{}: color {} must be non-negative or NCCL_SPLIT_NOCOLOR", fn, color);
    }
    NS_ASSIGN_OR_RETURN(blocking, blockingFrom(fn, config, parent->blocking()));
    return Status::Ok();
  }();
  if (!status.ok()) {
    noteGroupError(status);
    return reportError(status);
  }
  *newcomm = nullptr;
  CommTask task;
  task.comm = parent;
  task.fn = fn;
  // Inside a group, *newcomm is written at the outermost ncclGroupEnd.
  task.run = [color, key, blocking, newcomm](ShimComm& self) -> Status {
    NS_ASSIGN_OR_RETURN(std::unique_ptr<ShimComm> child, splitComm(self, color, key, blocking));
    *newcomm = child ? static_cast<ncclComm_t>(child.release()->handle()) : nullptr;
    return Status::Ok();
  };
  return reportError(submit(std::move(task)));
}

ncclResult_t gpufree::ncclCommShrink(ncclComm_t comm, int* excludeRanks, int excludeCount, ncclComm_t* newcomm,
                                     ncclConfig_t* config, int flags) {
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "ncclCommShrink is not supported GPU-free yet; use ncclCommSplit "
                              "on all ranks with NCCL_SPLIT_NOCOLOR for the excluded ones"));
}

ncclResult_t gpufree::ncclCommFinalize(ncclComm_t handle) {
  Result<ShimComm*> comm = checkComm("ncclCommFinalize", handle);
  if (!comm.ok()) return reportError(comm.status());
  // Every operation has completed when its call (or group) returned: nothing is left to flush.
  std::lock_guard<std::mutex> lock((*comm)->operationMutex());
  (*comm)->markFinalized();
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommDestroy(ncclComm_t handle) {
  Result<ShimComm*> comm = checkComm("ncclCommDestroy", handle);
  if (!comm.ok()) return reportError(comm.status());
  { std::lock_guard<std::mutex> lock((*comm)->operationMutex()); }  // let a running operation finish
  delete *comm;
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommAbort(ncclComm_t handle) {
  Result<ShimComm*> comm = checkComm("ncclCommAbort", handle);
  if (!comm.ok()) return reportError(comm.status());
  // Fail whatever operation is running (possibly on another thread), wait for it to return, free.
  (*comm)->abortTransport(fmt::format("ncclCommAbort on {}", (*comm)->describe()));
  { std::lock_guard<std::mutex> lock((*comm)->operationMutex()); }
  delete *comm;
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommRevoke(ncclComm_t comm, int flags) {
  return reportError(NS_ERROR(Code::kInvalidUsage, "ncclCommRevoke is not supported GPU-free yet; use ncclCommAbort"));
}

ncclResult_t gpufree::ncclCommGetAsyncError(ncclComm_t handle, ncclResult_t* error) {
  Result<ShimComm*> comm = checkComm("ncclCommGetAsyncError", handle);
  if (!comm.ok()) return reportError(comm.status());
  if (error == nullptr) return reportError(checkNotNull("ncclCommGetAsyncError", "asyncError", error));
  *error = toNcclResult((*comm)->asyncError().code());
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommCount(ncclComm_t handle, int* count) {
  Result<ShimComm*> comm = checkComm("ncclCommCount", handle);
  if (!comm.ok()) return reportError(comm.status());
  if (count == nullptr) return reportError(checkNotNull("ncclCommCount", "count", count));
  *count = (*comm)->nranks();
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommCuDevice(ncclComm_t handle, int* device) {
  Result<ShimComm*> comm = checkComm("ncclCommCuDevice", handle);
  if (!comm.ok()) return reportError(comm.status());
  if (device == nullptr) return reportError(checkNotNull("ncclCommCuDevice", "device", device));
  *device = (*comm)->device();
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommUserRank(ncclComm_t handle, int* rank) {
  Result<ShimComm*> comm = checkComm("ncclCommUserRank", handle);
  if (!comm.ok()) return reportError(comm.status());
  if (rank == nullptr) return reportError(checkNotNull("ncclCommUserRank", "rank", rank));
  *rank = (*comm)->rank();
  return ncclSuccess;
}

// Host buffers need no registration to work GPU-free; a registered one is also registered with the
// transport, so that large messages to and from it go zero-copy over ibverbs.
ncclResult_t gpufree::ncclCommRegister(ncclComm_t handle, void* buff, size_t size, void** out) {
  Result<ShimComm*> comm = checkComm("ncclCommRegister", handle);
  if (!comm.ok()) return reportError(comm.status());
  if (out == nullptr) return reportError(checkNotNull("ncclCommRegister", "handle", out));
  std::lock_guard<std::mutex> lock((*comm)->operationMutex());
  *out = (*comm)->registerBuffer(buff, size);
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommDeregister(ncclComm_t handle, void* registered) {
  Result<ShimComm*> comm = checkComm("ncclCommDeregister", handle);
  if (!comm.ok()) return reportError(comm.status());
  std::lock_guard<std::mutex> lock((*comm)->operationMutex());
  if (!(*comm)->deregisterBuffer(registered)) {
    return reportError(NS_ERROR(Code::kInvalidArgument,
                                "ncclCommDeregister: handle {} was not returned by "
                                "ncclCommRegister on this communicator, or was deregistered already",
                                registered));
  }
  return ncclSuccess;
}

ncclResult_t gpufree::ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int flags) {
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "ncclCommWindowRegister: symmetric memory windows need GPU "
                              "memory; not supported GPU-free"));
}

ncclResult_t gpufree::ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "ncclCommWindowDeregister: symmetric memory windows need GPU "
                              "memory; not supported GPU-free"));
}

}  // namespace nshim
