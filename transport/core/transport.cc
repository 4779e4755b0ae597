// Helpers shared by all transports.
#include "transport/core/transport.h"

namespace nshim {

Status timeoutError(int selfRank, std::span<Request* const> requests, double waitedSeconds) {
  for (Request* req : requests) {
    if (!req->done()) {
      return NS_ERROR(Code::kTimeout,
                      "rank {} timed out after {:.1f} s waiting for rank {} ({} of {} bytes, tag {:#x}); "
                      "the peer may be dead, stuck, or running a different operation",
                      selfRank, waitedSeconds, req->peer, req->isSend ? "send" : "receive", req->bytes, req->tag);
    }
  }
  return NS_ERROR(Code::kTimeout, "rank {} timed out after {:.1f} s", selfRank, waitedSeconds);
}

}  // namespace nshim
