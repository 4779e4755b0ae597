// Chooses the backend of this process from NCCLSHIM_MODE, once, at the first NCCL call (the shim is
// loaded before NCCL, so nothing can be decided at load time):
//   forward  the real NCCL (real_nccl.h); every call fails with a message when there is none;
//   gpufree  ncclshim itself on host memory;
//   auto     (default) forward when a real NCCL is loadable and a GPU is present, else gpufree.
// The choice and its reasons are logged at INFO (NCCLSHIM_DEBUG=INFO). A bad NCCLSHIM_* setting
// (common/settings.h) selects no backend: every NCCL call fails with ncclInvalidArgument naming it.
#include <string>

#include "common/hot_section.h"
#include "common/log.h"
#include "common/settings.h"
#include "libshim/backend.h"
#include "libshim/errors.h"
#include "libshim/forward_backend.h"
#include "libshim/gpu_probe.h"
#include "libshim/gpufree_backend.h"
#include "libshim/real_nccl.h"

namespace nshim {
namespace {

struct Selection {
  const NcclFunctions* backend = nullptr;  // lives for the whole process
  std::string mode;
  Status settings;  // the settings' error when one is bad (no backend then)
};

const NcclFunctions* forwarding(const std::string& why) {
  const RealNccl& real = realNccl();
  if (real.found) {
    NS_INFO("NCCLSHIM_MODE={}: forwarding to the real NCCL {} (found by {})", why, real.path, real.source);
  } else {
    NS_WARN("NCCLSHIM_MODE=forward but no real NCCL was found (tried {}); every NCCL call will fail", real.tried);
  }
  static const NcclFunctions table = forwardBackend(real);
  return &table;
}

const NcclFunctions* automatic() {
  const RealNccl& real = realNccl();
  if (!real.found) {
    NS_INFO("NCCLSHIM_MODE=auto: GPU-free (no real NCCL: {})", real.tried);
    return &gpufreeBackend();
  }
  GpuProbe gpus = probeGpus();
  if (gpus.devices > 0) return forwarding(fmt::format("auto ({})", gpus.detail));
  NS_INFO("NCCLSHIM_MODE=auto: GPU-free (a real NCCL is at {}, but no GPU: {})", real.path, gpus.detail);
  return &gpufreeBackend();
}

const Selection& selection() {
  static const Selection chosen = [] {
    Selection result;
    result.settings = validateSettings();
    if (!result.settings.ok()) {
      NS_WARN("{}: every NCCL call will fail", result.settings.message());
      return result;
    }
    result.mode = settingString(Setting::NCCLSHIM_MODE);
    if (result.mode == "gpufree") {
      NS_INFO("NCCLSHIM_MODE=gpufree: GPU-free");
      result.backend = &gpufreeBackend();
    } else if (result.mode == "forward") {
      result.backend = forwarding("forward");
    } else {
      result.backend = automatic();
    }
    return result;
  }();
  return chosen;
}

}  // namespace

namespace detail {
NSHIM_HOT_DATA std::atomic<const NcclFunctions*> gActiveBackend{nullptr};
}  // namespace detail

const NcclFunctions* activeBackendSlow() {
  const NcclFunctions* backend = selection().backend;
  detail::gActiveBackend.store(backend, std::memory_order_release);
  return backend;
}

Status backendUnavailable(const char* fn) { return withContext(selection().settings, fn); }

}  // namespace nshim
