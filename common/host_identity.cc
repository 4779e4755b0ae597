// Host identity and local rank (host_identity.h).
#include "common/host_identity.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/settings.h"

namespace nshim {
namespace {

std::string firstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

std::string networkNamespace() {
  char target[128] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : "";
}

}  // namespace

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "?";
  return name;
}

std::string hostIdentity() {
  std::string forced = settingString(Setting::NCCLSHIM_HOSTID);
  if (!forced.empty()) return forced;
  return hostName() + "/" + firstLine("/proc/sys/kernel/random/boot_id") + "/" + networkNamespace();
}

int localRankFromEnvironment() {
  if (const int64_t forced = settingInt(Setting::NCCLSHIM_LOCAL_RANK); forced != kSettingAuto)
    return static_cast<int>(forced);
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank < (1 << 20)) return static_cast<int>(rank);
  }
  return -1;
}

}  // namespace nshim
