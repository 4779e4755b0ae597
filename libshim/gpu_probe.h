// Whether this process can see a GPU, asked of the CUDA driver through dlopen("libcuda.so.1") and
// dlsym (no link dependency on CUDA): cuInit(0), then cuDeviceGetCount.
#pragma once

#include <string>

namespace nshim {

struct GpuProbe {
  int devices = 0;     // 0 when there is no driver, no device, or CUDA refused to start
  std::string detail;  // for the log: "2 CUDA devices", "libcuda.so.1: cannot open ...", ...
};

GpuProbe probeGpus();

}  // namespace nshim
