// The GPU-free backend's collectives and point-to-point (gpufree_backend.h). Each call checks its
// arguments (the message names the function and the argument), then runs the engine operation now
// or queues it in the group; across hosts, collectives run in NCCL's algorithm, protocol and channels.
#include "collectives/collectives.h"
#include "libshim/call_check.h"
#include "libshim/errors.h"
#include "libshim/gpufree_backend.h"
#include "libshim/group.h"
#include "libshim/validate.h"
#include "model/call_choice.h"

namespace nshim {
namespace {

// The checked arguments every operation has.
struct Checked {
  ShimComm* comm = nullptr;
  DataType type = DataType::kInt8;
  ReduceOp op;
};

// Checks comm, datatype and count (times nranks for the per-rank counts of gathers and scatters),
// and resolves the reduction when `redop` is not null.
Status checkCommon(const char* fn, ncclComm_t handle, ncclDataType_t type, size_t count, bool perRank,
                   const ncclRedOp_t* redop, Checked* out) {
  NS_ASSIGN_OR_RETURN(out->comm, checkComm(fn, handle));
  NS_RETURN_IF_ERROR(checkDataType(fn, type));
  out->type = static_cast<DataType>(type);
  NS_RETURN_IF_ERROR(checkCount(fn, "count", count, out->type, perRank ? out->comm->nranks() : 1));
  if (redop != nullptr) {
    NS_ASSIGN_OR_RETURN(out->op, out->comm->redOps().resolve(static_cast<int>(*redop), out->type, fn));
  }
  return Status::Ok();
}

// A call refused before anything was queued: inside a group the group fails too (like NCCL).
ncclResult_t refuse(const Status& status) {
  noteGroupError(status);
  return reportError(status);
}

// A collective: `call` is what every rank must have called (checked first under NCCLSHIM_CHECK_CALLS,
// call_check.h).
ncclResult_t issue(const char* fn, ShimComm* comm, const CallSignature& call,
                   std::function<Status(Communicator&)> body) {
  CommTask task;
  task.comm = comm;
  task.fn = fn;
  task.run = [call, body = std::move(body)](ShimComm& self) -> Status {
    if (__builtin_expect(callChecksOn(), 0)) NS_RETURN_IF_ERROR(checkSameCall(self, call));
    return body(self.engine());
  };
  return reportError(submit(std::move(task)));
}

int opOf(const Checked& c) { return static_cast<int>(c.op.kind); }

// Runs a collective as NCCL would have on a communicator of several hosts: its tuner's algorithm,
// protocol and channels for the size and the nodes (call_choice.h), NCCL_ALGO / NCCL_PROTO
// respected. On one host the engine's own choice (NCCLSHIM_ALGO, NCCLSHIM_PROTO, ...) runs.
Status asNcclChooses(Communicator& engine, CollectiveKind kind, size_t count, DataType type,
                     const std::function<Status(CallChoice)>& run) {
  if (engine.nodes().nodes() < 2) return run({});
  const size_t bytes = count * dataTypeSize(type) * sizeBlocks(describe(kind), engine.nranks());
  return run(chooseForCall(engine.options(), engine.nranks(), engine.nodes().nodes(), *tunedFuncOf(kind), bytes));
}

ncclResult_t issueP2P(const char* fn, ShimComm* comm, P2POp op) {
  CommTask task;
  task.comm = comm;
  task.fn = fn;
  task.p2p = op;
  return reportError(submit(std::move(task)));
}

// ncclBroadcast, and ncclBcast in place; `fn` names the one called.
ncclResult_t broadcastAs(const char* fn, const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                         ncclComm_t handle) {
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, false, nullptr, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "root", root, c.comm->nranks()));
    if (c.comm->rank() == root) NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return checkBuffer(fn, "recvbuff", recv, count);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kBroadcast, c.type, count, -1, root);
  return issue(fn, c.comm, call, [=](Communicator& engine) {
    return asNcclChooses(engine, CollectiveKind::kBroadcast, count, c.type, [&](CallChoice choice) {
      return nshim::broadcast(engine, send, recv, count, c.type, root, choice);
    });
  });
}

}  // namespace

ncclResult_t gpufree::ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                    ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclAllReduce";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, false, &op, &c));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return checkBuffer(fn, "recvbuff", recv, count);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kAllReduce, c.type, count, opOf(c));
  return issue(fn, c.comm, call, [=](Communicator& engine) {
    return asNcclChooses(engine, CollectiveKind::kAllReduce, count, c.type, [&](CallChoice choice) {
      return nshim::allReduce(engine, send, recv, count, c.type, c.op, choice);
    });
  });
}

ncclResult_t gpufree::ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                    ncclComm_t handle, cudaStream_t) {
  return broadcastAs("ncclBroadcast", send, recv, count, type, root, handle);
}

ncclResult_t gpufree::ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t handle,
                                cudaStream_t) {
  return broadcastAs("ncclBcast", buff, buff, count, type, root, handle);
}

ncclResult_t gpufree::ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                 int root, ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclReduce";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, false, &op, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "root", root, c.comm->nranks()));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return c.comm->rank() == root ? checkBuffer(fn, "recvbuff", recv, count) : Status::Ok();
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kReduce, c.type, count, opOf(c), root);
  return issue(fn, c.comm, call, [=](Communicator& engine) {
    return asNcclChooses(engine, CollectiveKind::kReduce, count, c.type, [&](CallChoice choice) {
      return nshim::reduce(engine, send, recv, count, c.type, c.op, root, choice);
    });
  });
}

ncclResult_t gpufree::ncclAllGather(const void* send, void* recv, size_t sendCount, ncclDataType_t type,
                                    ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclAllGather";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, sendCount, true, nullptr, &c));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, sendCount));
    return checkBuffer(fn, "recvbuff", recv, sendCount);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kAllGather, c.type, sendCount);
  return issue(fn, c.comm, call, [=](Communicator& engine) {
    return asNcclChooses(engine, CollectiveKind::kAllGather, sendCount, c.type, [&](CallChoice choice) {
      return nshim::allGather(engine, send, recv, sendCount, c.type, choice);
    });
  });
}

ncclResult_t gpufree::ncclReduceScatter(const void* send, void* recv, size_t recvCount, ncclDataType_t type,
                                        ncclRedOp_t op, ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclReduceScatter";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, recvCount, true, &op, &c));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, recvCount));
    return checkBuffer(fn, "recvbuff", recv, recvCount);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kReduceScatter, c.type, recvCount, opOf(c));
  return issue(fn, c.comm, call, [=](Communicator& engine) {
    return asNcclChooses(engine, CollectiveKind::kReduceScatter, recvCount, c.type, [&](CallChoice choice) {
      return nshim::reduceScatter(engine, send, recv, recvCount, c.type, c.op, choice);
    });
  });
}

ncclResult_t gpufree::ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t handle,
                                   cudaStream_t) {
  const char* fn = "ncclAlltoAll";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, true, nullptr, &c));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return checkBuffer(fn, "recvbuff", recv, count);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kAllToAll, c.type, count);
  return issue(fn, c.comm, call,
               [=](Communicator& engine) { return nshim::allToAll(engine, send, recv, count, c.type); });
}

ncclResult_t gpufree::ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                 ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclGather";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, true, nullptr, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "root", root, c.comm->nranks()));
    NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return c.comm->rank() == root ? checkBuffer(fn, "recvbuff", recv, count) : Status::Ok();
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kGather, c.type, count, -1, root);
  return issue(fn, c.comm, call,
               [=](Communicator& engine) { return nshim::gather(engine, send, recv, count, c.type, root); });
}

ncclResult_t gpufree::ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                  ncclComm_t handle, cudaStream_t) {
  const char* fn = "ncclScatter";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, true, nullptr, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "root", root, c.comm->nranks()));
    if (c.comm->rank() == root) NS_RETURN_IF_ERROR(checkBuffer(fn, "sendbuff", send, count));
    return checkBuffer(fn, "recvbuff", recv, count);
  }();
  if (!status.ok()) return refuse(status);
  const CallSignature call = signatureOf(CollectiveKind::kScatter, c.type, count, -1, root);
  return issue(fn, c.comm, call,
               [=](Communicator& engine) { return nshim::scatter(engine, send, recv, count, c.type, root); });
}

ncclResult_t gpufree::ncclSend(const void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t handle,
                               cudaStream_t) {
  const char* fn = "ncclSend";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, false, nullptr, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "peer", peer, c.comm->nranks()));
    return checkBuffer(fn, "sendbuff", buff, count);
  }();
  if (!status.ok()) return refuse(status);
  return issueP2P(fn, c.comm, {P2POp::Kind::kSend, peer, const_cast<void*>(buff), count * dataTypeSize(c.type)});
}

ncclResult_t gpufree::ncclRecv(void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t handle,
                               cudaStream_t) {
  const char* fn = "ncclRecv";
  Checked c;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkCommon(fn, handle, type, count, false, nullptr, &c));
    NS_RETURN_IF_ERROR(checkRank(fn, "peer", peer, c.comm->nranks()));
    return checkBuffer(fn, "recvbuff", buff, count);
  }();
  if (!status.ok()) return refuse(status);
  return issueP2P(fn, c.comm, {P2POp::Kind::kRecv, peer, buff, count * dataTypeSize(c.type)});
}

}  // namespace nshim
