// The GPU probe of NCCLSHIM_MODE=auto. It runs at the first NCCL call and only when a real NCCL was
// found; the driver library stays loaded (CUDA must not be unloaded after cuInit).
#include "libshim/gpu_probe.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace nshim {

GpuProbe probeGpus() {
  using CuInit = int (*)(unsigned int);
  using CuDeviceGetCount = int (*)(int*);
  GpuProbe probe;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* error = dlerror();
    probe.detail = fmt::format("no CUDA driver ({})", error != nullptr ? error : "libcuda.so.1 not found");
    return probe;
  }
  auto cuInit = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto cuDeviceGetCount = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (cuInit == nullptr || cuDeviceGetCount == nullptr) {
    probe.detail = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    return probe;
  }
  if (int error = cuInit(0); error != 0) {
    probe.detail = fmt::format("cuInit returned CUDA error {}", error);
    return probe;
  }
  int count = 0;
  if (int error = cuDeviceGetCount(&count); error != 0) {
    probe.detail = fmt::format("cuDeviceGetCount returned CUDA error {}", error);
    return probe;
  }
  probe.devices = count;
  probe.detail = fmt::format("{} CUDA device(s)", count);
  return probe;
}

}  // namespace nshim
