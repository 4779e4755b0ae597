// The table of NCCL's traffic-shaping variables, the captured values a replay installs, and the one
// lookup every NCCL_* read goes through (common/env.cc calls it).
#include "common/nccl_env.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "common/log.h"

namespace nshim {
namespace {

const std::vector<NcclVariable> kVariables = {
    // what NCCL runs each collective with
    {"NCCL_ALGO", "NCCLSHIM_ALGO", false},
    {"NCCL_PROTO", "NCCLSHIM_PROTO", false},
    {"NCCL_MIN_NCHANNELS", nullptr, false},
    {"NCCL_MAX_NCHANNELS", nullptr, false},
    {"NCCL_MIN_CTAS", nullptr, false},
    {"NCCL_MAX_CTAS", nullptr, false},
    {"NCCL_NCHANNELS_PER_NET_PEER", "NCCLSHIM_P2P_CHANNELS_PER_PEER", false},
    {"NCCL_NVLS_ENABLE", nullptr, false},
    {"NCCL_COLLNET_ENABLE", nullptr, false},
    // buffers and chunks
    {"NCCL_BUFFSIZE", nullptr, false},
    {"NCCL_P2P_NET_CHUNKSIZE", nullptr, false},
    {"NCCL_P2P_NVL_CHUNKSIZE", nullptr, false},
    {"NCCL_P2P_PCI_CHUNKSIZE", nullptr, false},
    // which network and which paths
    {"NCCL_NET", nullptr, false},
    {"NCCL_IB_DISABLE", nullptr, false},
    {"NCCL_CROSS_NIC", nullptr, false},
    {"NCCL_PXN_DISABLE", nullptr, false},
    {"NCCL_P2P_PXN_LEVEL", nullptr, false},
    {"NCCL_NET_GDR_LEVEL", nullptr, false},
    // the Socket transport
    {"NCCL_SOCKET_NTHREADS", nullptr, false},
    {"NCCL_NSOCKS_PERTHREAD", nullptr, false},
    {"NCCL_SOCKET_MIN_TASKSIZE", nullptr, false},
    {"NCCL_SOCKET_INLINE", nullptr, false},
    {"NCCL_SOCKET_SNDBUF", nullptr, false},
    {"NCCL_SOCKET_RCVBUF", nullptr, false},
    {"NCCL_SOCKET_IFNAME", "NCCLSHIM_SOCKET_IFNAME", true},
    // the IB / RoCE transport
    {"NCCL_IB_HCA", "NCCLSHIM_IB_HCA", true},
    {"NCCL_IB_GID_INDEX", "NCCLSHIM_IB_GID_INDEX", true},
    {"NCCL_IB_TC", "NCCLSHIM_IB_TC", false},
    {"NCCL_IB_SL", "NCCLSHIM_IB_SL", false},
    {"NCCL_IB_QPS_PER_CONNECTION", "NCCLSHIM_IB_QPS_PER_CONNECTION", false},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", "NCCLSHIM_IB_SPLIT_DATA_ON_QPS", false},
    {"NCCL_IB_AR_THRESHOLD", nullptr, false},
    {"NCCL_IB_ADAPTIVE_ROUTING", nullptr, false},
    {"NCCL_IB_TIMEOUT", "NCCLSHIM_IB_TIMEOUT", false},
    {"NCCL_IB_RETRY_CNT", "NCCLSHIM_IB_RETRY_CNT", false},
};

struct State {
  std::mutex mutex;
  std::map<std::string, std::string> captured;  // every recorded value, host-specific ones included
  std::set<std::string> read;
};

State& state() {
  static State s;
  return s;
}

std::optional<std::string> environmentValue(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return std::nullopt;
  return std::string(raw);
}

}  // namespace

const std::vector<NcclVariable>& ncclTrafficVariables() { return kVariables; }

const NcclVariable* findNcclVariable(std::string_view name) {
  for (const NcclVariable& v : kVariables) {
    if (name == v.name) return &v;
  }
  return nullptr;
}

NcclEnv ncclEnvOfProcess() {
  NcclEnv out;
  for (const NcclVariable& v : kVariables) {
    if (std::optional<std::string> value = environmentValue(v.name)) out.emplace_back(v.name, *value);
  }
  return out;
}

void useCapturedNcclEnv(const NcclEnv& captured) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.captured.clear();
  for (const auto& [name, value] : captured) {
    if (findNcclVariable(name) != nullptr && !value.empty()) s.captured[name] = value;
  }
}

std::optional<std::string> ncclVariable(const char* name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.read.insert(name);
  if (std::optional<std::string> value = environmentValue(name)) return value;
  const NcclVariable* variable = findNcclVariable(name);
  if (variable == nullptr || variable->hostSpecific) return std::nullopt;
  auto it = s.captured.find(name);
  if (it == s.captured.end()) return std::nullopt;
  return it->second;
}

int64_t settingOrNcclInt(Setting setting, const char* ncclName) {
  if (settingIsSet(setting)) return settingInt(setting);
  const std::optional<std::string> text = ncclVariable(ncclName);
  if (!text) return settingInt(setting);
  Result<SettingValue> value = parseSetting(settingDecl(setting), *text);
  if (!value.ok()) {
    NS_WARN("ignoring {}={}: expected {} (as {})", ncclName, *text, acceptedValues(settingDecl(setting)),
            settingDecl(setting).name);
    return settingInt(setting);
  }
  return value->number;
}

const char* ncclSourceName(NcclSource source) {
  switch (source) {
    case NcclSource::kEnvironment: return "environment";
    case NcclSource::kCapture: return "capture";
    case NcclSource::kOverride: return "override";
    case NcclSource::kCaptureNotApplied: return "capture (not applied)";
  }
  return "?";
}

std::vector<NcclSettingInForce> ncclSettingsInForce() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<NcclSettingInForce> out;
  for (const NcclVariable& v : kVariables) {
    NcclSettingInForce in;
    in.name = v.name;
    in.read = s.read.count(v.name) > 0;
    auto captured = s.captured.find(v.name);
    const std::string capturedValue = captured == s.captured.end() ? "" : captured->second;
    const SettingDecl* override = v.overrideName ? findSetting(v.overrideName) : nullptr;
    if (override != nullptr && settingIsSet(override->id)) {
      in.source = NcclSource::kOverride;
      in.via = override->name;
      in.value = settingText(override->id);
    } else if (std::optional<std::string> value = environmentValue(v.name)) {
      in.source = NcclSource::kEnvironment;
      in.value = *value;
    } else if (!capturedValue.empty()) {
      in.source = v.hostSpecific ? NcclSource::kCaptureNotApplied : NcclSource::kCapture;
      in.value = capturedValue;
      if (v.hostSpecific) in.via = "names the capture host's devices";
    } else {
      continue;
    }
    if (in.source != NcclSource::kCapture && in.source != NcclSource::kCaptureNotApplied && capturedValue != in.value) {
      in.captured = capturedValue;
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace nshim
