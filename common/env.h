// NCCL's own environment variables (NCCL_ALGO, NCCL_P2P_NET_CHUNKSIZE, ...) that ncclshim honours,
// with defaults; a malformed value is warned about and the default is used. NCCL_* names are read
// through ncclVariable (common/nccl_env.h: the environment, else a replayed capture's value); other
// names are read once and cached.
// NCCLSHIM_* settings are not read here: common/settings.h.
#pragma once

#include <cstdint>
#include <string>

namespace nshim {

std::string envString(const char* name, const std::string& fallback);
int64_t envInt(const char* name, int64_t fallback);
double envDouble(const char* name, double fallback);
// Size with optional K/M/G suffix (powers of two), e.g. "512K".
int64_t envBytes(const char* name, int64_t fallback);
// Parse "512K", "2M", "1G" or a plain number; -1 when malformed.
int64_t parseBytes(const std::string& text);

}  // namespace nshim
