// The guard around every exported function: it finds the active backend (refusing the call with a
// clear message when the selected mode is unavailable), and nothing thrown inside ncclshim
// (allocation failures included) crosses the C API; it becomes an ncclResult_t and a last error.
// A failed call is noted (errors.h), so that ncclGetLastError knows whose error is the newest.
#pragma once

#include <exception>
#include <new>

#include "common/hot_section.h"
#include "libshim/backend.h"
#include "libshim/errors.h"

namespace nshim {

template <typename Body>
NSHIM_HOT_CODE ncclResult_t guardedCall(const char* fn, Body&& body) noexcept {
  ncclResult_t result;
  try {
    const NcclFunctions* backend = activeBackend();
    result = backend != nullptr ? body(*backend) : reportError(backendUnavailable(fn));
  } catch (const std::bad_alloc&) {
    result = reportError(NS_ERROR(Code::kSystemError, "{}: out of host memory", fn));
  } catch (const std::exception& e) {
    result = reportError(NS_ERROR(Code::kInternal, "{}: unexpected exception: {}", fn, e.what()));
  } catch (...) { result = reportError(NS_ERROR(Code::kInternal, "{}: unexpected exception", fn)); }
  if (__builtin_expect(result != ncclSuccess, 0)) noteFailedCall(result);
  return result;
}

// For the entry points that return a string.
template <typename Body>
NSHIM_HOT_CODE const char* guardedString(const char* fallback, Body&& body) noexcept {
  try {
    const NcclFunctions* backend = activeBackend();
    return backend != nullptr ? body(*backend) : fallback;
  } catch (...) { return fallback; }
}

}  // namespace nshim
