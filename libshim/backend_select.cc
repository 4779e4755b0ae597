// Chooses the backend of this process from NCCLSHIM_MODE. Only GPU-free execution exists so far:
// `auto` and `gpufree` select it; `forward` (the real NCCL behind a recorder) is refused with a
// message on every call rather than silently running GPU-free on device pointers.
#include <string>

#include "common/env.h"
#include "common/log.h"
#include "libshim/backend.h"
#include "libshim/gpufree_backend.h"

namespace nshim {
namespace {

struct Selection {
  NcclBackend* backend = nullptr;
  std::string mode;
};

const Selection& selection() {
  static const Selection chosen = [] {
    Selection result;
    result.mode = envString("NCCLSHIM_MODE", "auto");
    if (result.mode == "auto" || result.mode == "gpufree") {
      result.backend = new GpuFreeBackend();  // lives for the whole process
    } else {
      NS_WARN("NCCLSHIM_MODE={} is not available in this build (use auto or gpufree); every NCCL call will fail",
              result.mode);
    }
    return result;
  }();
  return chosen;
}

}  // namespace

NcclBackend* activeBackend() { return selection().backend; }

Status backendUnavailable(const char* fn) {
  return NS_ERROR(Code::kInvalidUsage, "{}: NCCLSHIM_MODE={} is not available in this build (supported: auto, gpufree)",
                  fn, selection().mode);
}

}  // namespace nshim
