// Finding the real NCCL (real_nccl.h). The library is chosen by probing ncclGetVersion (present in
// every NCCL); then each function is looked up the same way the probe succeeded. Nothing here calls
// into NCCL: finding it must not change what the program sees.
#include "libshim/real_nccl.h"

#include <dlfcn.h>

#include <cstdlib>

#include "common/log.h"
#include "common/settings.h"

namespace nshim {
namespace {

constexpr const char* kProbe = "ncclGetVersion";

const void* ourBase() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<const void*>(&ourBase), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  return base;
}

bool isOurs(const void* symbol) {
  Dl_info info{};
  return dladdr(symbol, &info) != 0 && info.dli_fbase == ourBase();
}

std::string libraryOf(const void* symbol) {
  Dl_info info{};
  return dladdr(symbol, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
}

std::string dlError() {
  const char* error = dlerror();
  return error != nullptr ? error : "unknown error";
}

// Where symbols come from: RTLD_NEXT, or a library handle.
struct Source {
  void* handle = RTLD_NEXT;
  std::string name;

  void* findAny(const char* symbol) const {
    dlerror();
    return dlsym(handle, symbol);
  }
  void* find(const char* symbol) const {
    void* found = findAny(symbol);
    return found != nullptr && !isOurs(found) ? found : nullptr;
  }
};

// Fills every function from `source` when its probe resolves; else appends why to `tried`.
bool resolveFrom(const Source& source, RealNccl& real, std::string& tried) {
  void* probe = source.findAny(kProbe);
  if (probe == nullptr || isOurs(probe)) {
    tried += source.name + (probe == nullptr ? ": no ncclGetVersion; " : ": that is libncclshim itself; ");
    return false;
  }
  NcclFunctions& functions = real.functions;
#define NS_RESOLVE(name)                                                                              \
  functions.nccl##name = reinterpret_cast<decltype(functions.nccl##name)>(source.find("nccl" #name)); \
  if (functions.nccl##name == nullptr) real.missing += (real.missing.empty() ? "nccl" #name : " nccl" #name);
  NS_NCCL_API_FUNCTIONS(NS_RESOLVE)
#undef NS_RESOLVE
  real.found = true;
  real.path = libraryOf(probe);
  real.source = source.name;
  return true;
}

// A library handle for dlopen(file, flags), or nullptr with the reason appended to `tried`.
void* openLibrary(const char* file, int flags, const std::string& label, std::string& tried) {
  dlerror();
  void* handle = dlopen(file, flags);
  if (handle == nullptr) tried += label + ": " + dlError() + "; ";
  return handle;
}

RealNccl resolve() {
  RealNccl real;
  std::string tried;
  if (resolveFrom(Source{RTLD_NEXT, "dlsym(RTLD_NEXT)"}, real, tried)) return real;

  const std::string noload = "dlopen(libnccl.so.2, RTLD_NOLOAD)";
  if (void* handle = openLibrary("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD, noload, tried)) {
    if (resolveFrom(Source{handle, noload}, real, tried)) return real;
  }

  const std::string setting = settingString(Setting::NCCLSHIM_REAL_NCCL);
  const char* path = setting.c_str();
  if (path[0] == '\0') {
    tried += "NCCLSHIM_REAL_NCCL: not set";
  } else {
    const std::string label = std::string("dlopen(NCCLSHIM_REAL_NCCL=") + path + ")";
    if (void* handle = openLibrary(path, RTLD_NOW | RTLD_LOCAL, label, tried)) {
      if (resolveFrom(Source{handle, label}, real, tried)) return real;
    }
  }
  real.tried = tried.substr(0, tried.find_last_not_of("; ") + 1);
  return real;
}

}  // namespace

const RealNccl& realNccl() {
  static const RealNccl real = [] {
    RealNccl resolved = resolve();
    if (resolved.found) {
      NS_INFO("real NCCL: {} (found by {}){}{}", resolved.path, resolved.source,
              resolved.missing.empty() ? "" : "; it lacks: ", resolved.missing);
    } else {
      NS_INFO("no real NCCL in this process: {}", resolved.tried);
    }
    return resolved;
  }();
  return real;
}

}  // namespace nshim
