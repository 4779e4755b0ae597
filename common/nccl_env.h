// The NCCL_* variables that shape a job's traffic (algorithm, protocol, channels, buffer and chunk
// sizes, sockets, queue pairs, QoS, PXN): recorded with a capture (the trace header's `nccl_env`),
// honoured by a replay and listed in its report with where each value came from. Every NCCL_*
// variable ncclshim reads goes through ncclVariable(): the replay's own environment first, then the
// capture's value (useCapturedNcclEnv); an NCCLSHIM_* setting that means the same (NCCLSHIM_ALGO for
// NCCL_ALGO) overrides both where the reader honours it. Names of the capture host's devices
// (NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME) are recorded and shown but not taken from the
// capture: they name another machine's NICs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/settings.h"

namespace nshim {

struct NcclVariable {
  const char* name;
  const char* overrideName;  // the NCCLSHIM_* setting that overrides it, or nullptr
  bool hostSpecific;         // names the capture host's devices: never taken from a capture
};

// The variables recorded at capture, in a fixed order.
const std::vector<NcclVariable>& ncclTrafficVariables();
const NcclVariable* findNcclVariable(std::string_view name);

using NcclEnv = std::vector<std::pair<std::string, std::string>>;  // name -> value, in table order

// This process's values of the variables (set and non-empty), for the trace header.
NcclEnv ncclEnvOfProcess();

// A replay: the values its capture recorded (the lowest rank's trace). Names this process's
// environment sets keep the environment's value; host-specific names are never taken.
void useCapturedNcclEnv(const NcclEnv& captured);

// The value of an NCCL_* variable as ncclshim honours it: the environment's when set (non-empty),
// else the capture's; nullopt when neither sets it. The name is remembered as read.
std::optional<std::string> ncclVariable(const char* name);

// An integer setting with an NCCL twin (NCCLSHIM_IB_TC and NCCL_IB_TC): the setting when set, else
// NCCL's variable (ncclVariable) when it is an integer the setting accepts, else the setting's
// default; a value it does not accept is warned about, naming the variable.
int64_t settingOrNcclInt(Setting setting, const char* ncclName);

// Where a setting in force came from.
enum class NcclSource { kEnvironment, kCapture, kOverride, kCaptureNotApplied };
const char* ncclSourceName(NcclSource source);  // "environment", "capture", "override", "capture (not applied)"

struct NcclSettingInForce {
  std::string name;   // NCCL_* name
  std::string value;  // the value in force (an override's value for kOverride)
  NcclSource source = NcclSource::kEnvironment;
  std::string via;       // kOverride: the NCCLSHIM_* name; kCaptureNotApplied: why
  std::string captured;  // the capture's value when it differs from `value` ("" when none or equal)
  bool read = false;     // this process looked it up (the replay's engine or transport uses it)
};

// Every variable of the table that is set by the environment, an override or the capture.
std::vector<NcclSettingInForce> ncclSettingsInForce();

}  // namespace nshim
