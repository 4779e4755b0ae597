// The guard around every exported function: it finds the active backend (refusing the call with a
// clear message when the selected mode is unavailable), and nothing thrown inside ncclshim
// (allocation failures included) crosses the C API; it becomes an ncclResult_t and a last error.
#pragma once

#include <exception>
#include <new>

#include "libshim/backend.h"
#include "libshim/errors.h"

namespace nshim {

template <typename Body>
ncclResult_t guardedCall(const char* fn, Body&& body) noexcept {
  try {
    NcclBackend* backend = activeBackend();
    if (backend == nullptr) return reportError(backendUnavailable(fn));
    return body(*backend);
  } catch (const std::bad_alloc&) {
    return reportError(NS_ERROR(Code::kSystemError, "{}: out of host memory", fn));
  } catch (const std::exception& e) {
    return reportError(NS_ERROR(Code::kInternal, "{}: unexpected exception: {}", fn, e.what()));
  } catch (...) {
    return reportError(NS_ERROR(Code::kInternal, "{}: unexpected exception", fn));
  }
}

// For the entry points that return a string.
template <typename Body>
const char* guardedString(const char* fallback, Body&& body) noexcept {
  try {
    NcclBackend* backend = activeBackend();
    return backend != nullptr ? body(*backend) : fallback;
  } catch (...) {
    return fallback;
  }
}

}  // namespace nshim
