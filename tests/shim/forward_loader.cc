// Loads a build of the forward test program as a shared library with dlopen(RTLD_NOW | RTLD_LOCAL)
// and runs its forwardTestMain, the way Python loads PyTorch: whatever NCCL that library brings (or
// none) is then invisible to dlsym(RTLD_NEXT) in the preloaded shim.
//   forward_loader <library.so> <scenario> <rank> <nranks> <dir>
#include <dlfcn.h>

#include <cstdio>

#include "../../common/main_fence.h"  // built without -I.

namespace {

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <library.so> <program arguments...>\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "forward_loader: %s\n", dlerror());
    return 2;
  }
  using Main = int (*)(int, char**);
  auto entry = reinterpret_cast<Main>(dlsym(library, "forwardTestMain"));
  if (entry == nullptr) {
    std::fprintf(stderr, "forward_loader: no forwardTestMain in %s\n", argv[1]);
    return 2;
  }
  return entry(argc - 1, argv + 1);
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("forward_loader", [&] { return run(argc, argv); });
}
