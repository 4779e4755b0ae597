// A guard for algorithms that post requests: if the algorithm leaves early with an error, the
// transport is aborted before the request array (declared before the guard) is freed, so no
// transport queue can keep a pointer to a dead request, and the peers learn of the failure at once.
#pragma once

#include "transport/core/transport.h"

namespace nshim {

class AbortOnError {
 public:
  explicit AbortOnError(Transport& transport) : transport_(transport) {}
  AbortOnError(const AbortOnError&) = delete;
  AbortOnError& operator=(const AbortOnError&) = delete;
  ~AbortOnError() {
    if (!completed_) transport_.abort("a collective operation failed on this rank");
  }
  // Call on the success path, once every posted request has completed.
  Status completed(Status status = Status::Ok()) {
    if (status.ok()) completed_ = true;
    return status;
  }

 private:
  Transport& transport_;
  bool completed_ = false;
};

}  // namespace nshim
