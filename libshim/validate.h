// Argument checks of the GPU-free API, done before anything is queued or sent so that every rank
// that makes the same bad call fails the same way; each message names the function and argument.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "libshim/shim_comm.h"
#include "model/datatype.h"

namespace nshim {

// The communicator behind `handle`, or an error naming `fn`.
Result<ShimComm*> checkComm(const char* fn, void* handle);
Status checkDataType(const char* fn, int type);
// count * elementsPerCount elements of `type` must fit in memory arithmetic.
Status checkCount(const char* fn, const char* name, size_t count, DataType type, size_t elementsPerCount);
// A buffer this rank uses must not be null when it holds data.
Status checkBuffer(const char* fn, const char* name, const void* buffer, size_t count);
// root or peer in [0, nranks).
Status checkRank(const char* fn, const char* name, int value, int nranks);
Status checkNotNull(const char* fn, const char* name, const void* pointer);

}  // namespace nshim
