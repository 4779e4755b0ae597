// The GPU-free backend's library-level calls (version, error strings, host memory, the debug reset),
// groups and PreMulSum operators (gpufree_backend.h).
#include <unistd.h>

#include <cstdint>
#include <string>

#include "collectives/reduce.h"
#include "libshim/errors.h"
#include "libshim/gpufree_backend.h"
#include "libshim/group.h"
#include "libshim/host_allocations.h"
#include "libshim/shim_comm.h"
#include "libshim/validate.h"

namespace nshim {

ncclResult_t gpufree::ncclGetVersion(int* version) {
  if (version == nullptr) return reportError(checkNotNull("ncclGetVersion", "version", version));
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* gpufree::ncclGetErrorString(ncclResult_t result) { return resultString(result); }

const char* gpufree::ncclGetLastError(ncclComm_t comm) {
  const char* message = lastErrorMessage();
  if (message[0] != '\0') return message;
  // Nothing failed on this thread: an asynchronous error of the communicator, if any.
  static thread_local std::string commMessage;
  ShimComm* shim = ShimComm::fromHandle(comm);
  commMessage = shim != nullptr ? shim->asyncError().message() : "";
  return commMessage.c_str();
}

// GPU-free, "device" memory is host memory: page-aligned like cuMem allocations. A size beyond the
// host's physical memory is an NCCL error before the allocator sees it (an allocator may abort on
// an impossible size, as sanitizers' do, instead of returning NULL).
ncclResult_t gpufree::ncclMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return reportError(checkNotNull("ncclMemAlloc", "ptr", ptr));
  const long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && pageBytes > 0 ? uint64_t(pages) * uint64_t(pageBytes) : 0;
  if (physical != 0 && size > physical) {
    return reportError(NS_ERROR(Code::kSystemError,
                                "ncclMemAlloc: {} bytes is more than this host's {} bytes of memory", size, physical));
  }
  Result<void*> memory = allocateHostMemory(size);
  if (!memory.ok()) return reportError(withContext(memory.status(), "ncclMemAlloc"));
  *ptr = *memory;
  return ncclSuccess;
}

ncclResult_t gpufree::ncclMemFree(void* ptr) { return reportError(withContext(freeHostMemory(ptr), "ncclMemFree")); }

// Deprecated in nccl.h. GPU-free there is nothing to reset: settings are read once.
void gpufree::ncclResetDebugInit() {}

ncclResult_t gpufree::ncclGroupStart() {
  nshim::groupStart();
  return ncclSuccess;
}

ncclResult_t gpufree::ncclGroupEnd() { return reportError(nshim::groupEnd()); }

ncclResult_t gpufree::ncclGroupSimulateEnd(ncclSimInfo_t* info) {
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "ncclGroupSimulateEnd: performance estimates need NCCL's GPU model; not supported "
                              "GPU-free (the group stays open)"));
}

ncclResult_t gpufree::ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                               ncclScalarResidence_t residence, ncclComm_t handle) {
  const char* fn = "ncclRedOpCreatePreMulSum";
  ShimComm* comm = nullptr;
  Status status = [&]() -> Status {
    NS_RETURN_IF_ERROR(checkNotNull(fn, "op", op));
    NS_RETURN_IF_ERROR(checkNotNull(fn, "scalar", scalar));
    NS_RETURN_IF_ERROR(checkDataType(fn, type));
    if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate) {
      return NS_ERROR(Code::kInvalidArgument, "{}: invalid residence {} (ncclScalarDevice or ncclScalarHostImmediate)",
                      fn, static_cast<int>(residence));
    }
    NS_ASSIGN_OR_RETURN(comm, checkComm(fn, handle));
    return Status::Ok();
  }();
  if (!status.ok()) return reportError(status);
  PreMulSumOp premul;
  premul.type = static_cast<DataType>(type);
  // Device residence: the scalar is read when each operation is issued (it may change between
  // operations); host memory stands in for device memory GPU-free.
  premul.byAddress = residence == ncclScalarDevice;
  premul.scalarAddress = scalar;
  premul.value = loadAsDouble(premul.type, scalar, 0);
  *op = static_cast<ncclRedOp_t>(comm->redOps().create(premul));
  return ncclSuccess;
}

ncclResult_t gpufree::ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t handle) {
  const char* fn = "ncclRedOpDestroy";
  Result<ShimComm*> comm = checkComm(fn, handle);
  if (!comm.ok()) return reportError(comm.status());
  return reportError((*comm)->redOps().destroy(static_cast<int>(op), fn));
}

}  // namespace nshim
