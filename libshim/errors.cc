// Error mapping and the per-thread last error of the C API.
#include "libshim/errors.h"

#include "common/log.h"

namespace nshim {
namespace {

thread_local std::string tLastError;
thread_local bool tShimErrorNewest = false;
thread_local bool tShimReportedSinceFailedCall = false;

}  // namespace

ncclResult_t toNcclResult(Code code) {
  switch (code) {
    case Code::kOk: return ncclSuccess;
    case Code::kInvalidArgument: return ncclInvalidArgument;
    case Code::kInvalidUsage: return ncclInvalidUsage;
    case Code::kSystemError: return ncclSystemError;
    // A peer that does not answer before the deadline is a remote failure as far as the caller
    // can tell (dead, stuck, or running a different operation).
    case Code::kRemoteError:
    case Code::kTimeout: return ncclRemoteError;
    case Code::kInternal: return ncclInternalError;
  }
  return ncclInternalError;
}

const char* resultString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (ncclshim: see ncclGetLastError)";
    case ncclSystemError: return "unhandled system error (ncclshim: see ncclGetLastError or NCCLSHIM_DEBUG=WARN)";
    case ncclInternalError: return "internal error - please report this issue to the ncclshim developers";
    case ncclInvalidArgument: return "invalid argument (ncclshim: see ncclGetLastError)";
    case ncclInvalidUsage: return "invalid usage (ncclshim: see ncclGetLastError)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

ncclResult_t reportError(const Status& status) {
  if (status.ok()) return ncclSuccess;
  NS_WARN("{}", status.toString());
  tLastError = status.toString();
  tShimErrorNewest = true;
  tShimReportedSinceFailedCall = true;
  return toNcclResult(status.code());
}

const char* lastErrorMessage() { return tLastError.c_str(); }

void noteFailedCall(ncclResult_t result) {
  if (!tShimReportedSinceFailedCall && result != ncclInProgress) tShimErrorNewest = false;
  tShimReportedSinceFailedCall = false;
}

bool shimErrorIsNewest() { return tShimErrorNewest; }

Status withContext(const Status& status, const std::string& context) {
  if (status.ok()) return status;
  return Status(status.code(), context + ": " + status.message());
}

}  // namespace nshim
