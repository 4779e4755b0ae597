// Exported NCCL communicator functions: each passes its arguments to the active backend inside the
// API frame (api_call.h). Creation calls also register each new communicator in the side table
// with its comm id (equal on all members), size and rank; destroy and abort remove it.
#include "libshim/api_call.h"
#include "trace/comm_id.h"

using nshim::ApiCall;
using nshim::ApiId;
using nshim::CommCreated;
using nshim::CreatedComms;

namespace {

CommCreated fromIds(const void* ids, size_t bytes, int nranks, int rank) {
  CommCreated made;
  made.commId = nshim::trace::commIdFromUniqueId(ids, bytes);
  made.nranks = nranks;
  made.rank = rank;
  return made;
}

// Split and shrink: the parent's split counter advances on every member, so all agree on the id.
struct SplitOrigin {
  void* parent = nullptr;
  uint64_t parentId = 0;
  uint64_t splitSeq = 0;

  explicit SplitOrigin(ncclComm_t comm) : parent(comm) {
    if (nshim::CommState* state = nshim::findComm(comm)) {
      parentId = state->commId;
      splitSeq = state->nextSplit.fetch_add(1, std::memory_order_relaxed);
    }
  }

  CommCreated made(int color, int key) const {
    CommCreated created;
    created.commId = nshim::trace::commIdForSplit(parentId, color, splitSeq);
    created.parent = parent;
    created.parentId = parentId;
    created.splitSeq = splitSeq;
    created.color = color;
    created.key = key;
    return created;
  }
};

auto describeComm(ncclComm_t comm) {
  return [comm](ApiCall& call) { call.comm = comm; };
}

}  // namespace

NS_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return nshim::apiCall<ApiId::kGetUniqueId>([&](ApiCall& call) { call.handle = uniqueId; }, uniqueId);
}

NS_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                           ncclConfig_t* config) {
  return nshim::creationCall<ApiId::kCommInitRankConfig>(
      [&](ApiCall& call) { call.handle = config; },
      [&](ncclResult_t result, CreatedComms& made) {
        made.push_back(nshim::registerCreatedAt(result, comm, fromIds(&commId, sizeof(commId), nranks, rank)));
      },
      comm, nranks, commId, rank, config);
}

NS_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return nshim::creationCall<ApiId::kCommInitRank>(
      [](ApiCall&) {},
      [&](ncclResult_t result, CreatedComms& made) {
        made.push_back(nshim::registerCreatedAt(result, comm, fromIds(&commId, sizeof(commId), nranks, rank)));
      },
      comm, nranks, commId, rank);
}

NS_API ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return nshim::creationCall<ApiId::kCommInitAll>(
      [&](ApiCall& call) { call.count = ndev > 0 ? ndev : 0; },
      [&](ncclResult_t result, CreatedComms& made) {
        uint64_t id = nshim::trace::freshCommId();  // every member is in this process
        for (int i = 0; i < ndev && comm != nullptr; ++i) {
          CommCreated created;
          created.comm = nshim::createdSomething(result) ? comm[i] : nullptr;
          created.commId = id;
          created.nranks = ndev;
          created.rank = i;
          made.push_back(nshim::registerCreated(created));
        }
      },
      comm, ndev, devlist);
}

NS_API ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                             ncclUniqueId* commIds, ncclConfig_t* config) {
  return nshim::creationCall<ApiId::kCommInitRankScalable>(
      [&](ApiCall& call) {
        call.count = nId > 0 ? nId : 0;
        call.handle = config;
      },
      [&](ncclResult_t result, CreatedComms& made) {
        size_t bytes = commIds != nullptr && nId > 0 ? static_cast<size_t>(nId) * sizeof(ncclUniqueId) : 0;
        made.push_back(nshim::registerCreatedAt(result, newcomm, fromIds(commIds, bytes, nranks, myrank)));
      },
      newcomm, nranks, myrank, nId, commIds, config);
}

NS_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const SplitOrigin origin(comm);
  return nshim::creationCall<ApiId::kCommSplit>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.handle = config;
      },
      [&](ncclResult_t result, CreatedComms& made) {
        made.push_back(nshim::registerCreatedAt(result, newcomm, origin.made(color, key), color != NCCL_SPLIT_NOCOLOR));
      },
      comm, color, key, newcomm, config);
}

NS_API ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                                   ncclConfig_t* config, int shrinkFlags) {
  const SplitOrigin origin(comm);
  return nshim::creationCall<ApiId::kCommShrink>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.handle = excludeRanksList;
        call.count = excludeRanksCount > 0 ? excludeRanksCount : 0;
        call.flags = shrinkFlags;
      },
      [&](ncclResult_t result, CreatedComms& made) {
        made.push_back(nshim::registerCreatedAt(result, newcomm, origin.made(nshim::kShrinkColor, -1)));
      },
      comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
}

NS_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return nshim::apiCall<ApiId::kCommFinalize>(describeComm(comm), comm);
}

NS_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  ncclResult_t result = nshim::apiCall<ApiId::kCommDestroy>(describeComm(comm), comm);
  if (result == ncclSuccess) nshim::forgetComm(comm);
  return result;
}

NS_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  ncclResult_t result = nshim::apiCall<ApiId::kCommAbort>(describeComm(comm), comm);
  nshim::forgetComm(comm);  // gone whatever the result
  return result;
}

NS_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return nshim::apiCall<ApiId::kCommRevoke>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.flags = revokeFlags;
      },
      comm, revokeFlags);
}

NS_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return nshim::apiCall<ApiId::kCommGetAsyncError>(describeComm(comm), comm, asyncError);
}

NS_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return nshim::apiCall<ApiId::kCommCount>(describeComm(comm), comm, count);
}

NS_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return nshim::apiCall<ApiId::kCommCuDevice>(describeComm(comm), comm, device);
}

NS_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return nshim::apiCall<ApiId::kCommUserRank>(describeComm(comm), comm, rank);
}

NS_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return nshim::apiCall<ApiId::kCommRegister>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.sendbuff = buff;
        call.count = size;
        call.handle = handle;
      },
      comm, buff, size, handle);
}

NS_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return nshim::apiCall<ApiId::kCommDeregister>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.handle = handle;
      },
      comm, handle);
}

NS_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  return nshim::apiCall<ApiId::kCommWindowRegister>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.sendbuff = buff;
        call.count = size;
        call.handle = win;
        call.flags = winFlags;
      },
      comm, buff, size, win, winFlags);
}

NS_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return nshim::apiCall<ApiId::kCommWindowDeregister>(
      [&](ApiCall& call) {
        call.comm = comm;
        call.handle = win;
      },
      comm, win);
}

NS_NCCL_COMMUNICATOR_FUNCTIONS(NS_PNCCL_ALIAS)
