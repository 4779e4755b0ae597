// The job's NCCL settings (common/nccl_env.h): a process's traffic-shaping NCCL_* variables are
// collected for the trace header; a replay takes the capture's values where its own environment
// sets none, never the capture host's device names; every NCCL_* read of common/env.h goes through
// that lookup; an NCCLSHIM_* twin overrides; the settings in force say where each came from and
// whether the replay looked it up.
#include <cstdlib>
#include <string>

#include "common/env.h"
#include "common/nccl_env.h"
#include "model/collective_options.h"
#include "tests/catch.h"
#include "tests/common/scoped_env.h"

namespace nshim {
namespace {

using testing::ScopedEnv;

// Installs a capture's values for one test, and none after it.
struct ScopedCapture {
  explicit ScopedCapture(const NcclEnv& env) { useCapturedNcclEnv(env); }
  ~ScopedCapture() { useCapturedNcclEnv({}); }
};

const NcclSettingInForce* find(const std::vector<NcclSettingInForce>& all, const std::string& name) {
  for (const NcclSettingInForce& s : all) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST_CASE("a process's traffic-shaping NCCL variables are collected, in table order", "[nccl_env]") {
  ScopedEnv buff("NCCL_BUFFSIZE", "4194304");
  ScopedEnv algo("NCCL_ALGO", "Tree");
  ScopedEnv empty("NCCL_PROTO", "");      // empty is unset, as NCCL reads it
  ScopedEnv other("NCCL_DEBUG", "INFO");  // not traffic-shaping: not recorded
  const NcclEnv env = ncclEnvOfProcess();
  REQUIRE(env.size() >= 2);
  bool sawAlgo = false, sawBuff = false;
  for (const auto& [name, value] : env) {
    CHECK(findNcclVariable(name) != nullptr);
    CHECK(name != "NCCL_PROTO");
    CHECK(name != "NCCL_DEBUG");
    if (name == "NCCL_ALGO") sawAlgo = value == "Tree";
    if (name == "NCCL_BUFFSIZE") sawBuff = value == "4194304" && sawAlgo;  // NCCL_ALGO comes first in the table
  }
  CHECK(sawAlgo);
  CHECK(sawBuff);
}

TEST_CASE("a replay takes the capture's values where its environment sets none", "[nccl_env]") {
  ScopedEnv chunk("NCCL_P2P_NET_CHUNKSIZE", nullptr);
  ScopedEnv buff("NCCL_BUFFSIZE", "8M");
  ScopedEnv hca("NCCL_IB_HCA", nullptr);
  ScopedCapture capture({{"NCCL_P2P_NET_CHUNKSIZE", "128K"},
                         {"NCCL_BUFFSIZE", "4194304"},
                         {"NCCL_IB_HCA", "mlx5_0"},
                         {"NCCL_NOT_A_SETTING", "1"}});
  CHECK(ncclVariable("NCCL_P2P_NET_CHUNKSIZE") == std::optional<std::string>("128K"));
  CHECK(envBytes("NCCL_P2P_NET_CHUNKSIZE", 1) == 128 << 10);                 // common/env.h reads through it
  CHECK(ncclVariable("NCCL_BUFFSIZE") == std::optional<std::string>("8M"));  // the environment wins
  CHECK_FALSE(ncclVariable("NCCL_IB_HCA").has_value());                      // the capture host's NICs: never taken
  CHECK_FALSE(ncclVariable("NCCL_NOT_A_SETTING").has_value());

  const std::vector<NcclSettingInForce> all = ncclSettingsInForce();
  const NcclSettingInForce* c = find(all, "NCCL_P2P_NET_CHUNKSIZE");
  REQUIRE(c != nullptr);
  CHECK(c->source == NcclSource::kCapture);
  CHECK(c->value == "128K");
  CHECK(c->read);
  const NcclSettingInForce* b = find(all, "NCCL_BUFFSIZE");
  REQUIRE(b != nullptr);
  CHECK(b->source == NcclSource::kEnvironment);
  CHECK(b->value == "8M");
  CHECK(b->captured == "4194304");
  const NcclSettingInForce* h = find(all, "NCCL_IB_HCA");
  REQUIRE(h != nullptr);
  CHECK(h->source == NcclSource::kCaptureNotApplied);
  CHECK(h->value == "mlx5_0");
  CHECK(find(all, "NCCL_NOT_A_SETTING") == nullptr);
}

TEST_CASE("an NCCLSHIM twin overrides NCCL's variable, from the environment or the capture", "[nccl_env]") {
  ScopedEnv tc("NCCL_IB_TC", nullptr);
  ScopedEnv ours("NCCLSHIM_IB_TC", nullptr);
  ScopedEnv algo("NCCL_ALGO", nullptr);
  ScopedEnv ourAlgo("NCCLSHIM_ALGO", "ring");
  ScopedCapture capture({{"NCCL_IB_TC", "106"}, {"NCCL_ALGO", "Tree"}});
  CHECK(settingOrNcclInt(Setting::NCCLSHIM_IB_TC, "NCCL_IB_TC") == 106);
  {
    ScopedEnv set("NCCLSHIM_IB_TC", "41");
    CHECK(settingOrNcclInt(Setting::NCCLSHIM_IB_TC, "NCCL_IB_TC") == 41);
  }
  {
    ScopedEnv bad("NCCL_IB_TC", "999");  // out of the setting's range: warned, the default kept
    CHECK(settingOrNcclInt(Setting::NCCLSHIM_IB_TC, "NCCL_IB_TC") == 0);
  }
  const std::vector<NcclSettingInForce> all = ncclSettingsInForce();
  const NcclSettingInForce* a = find(all, "NCCL_ALGO");
  REQUIRE(a != nullptr);
  CHECK(a->source == NcclSource::kOverride);
  CHECK(a->via == "NCCLSHIM_ALGO");
  CHECK(a->value == "ring");
  CHECK(a->captured == "Tree");
}

// NCCL caps its channels at NCCL_MAX_NCHANNELS, then duplicates them up to NCCL_MIN_NCHANNELS: the
// count the tuner gives a call that no recorded decision covers. NCCLSHIM_NCHANNELS sets it outright.
TEST_CASE("NCCL_MIN/MAX_NCHANNELS bound the collective channels, from the environment or the capture", "[nccl_env]") {
  ScopedEnv ours("NCCLSHIM_NCHANNELS", nullptr);
  ScopedEnv most("NCCL_MAX_NCHANNELS", nullptr);
  ScopedEnv least("NCCL_MIN_NCHANNELS", nullptr);
  CHECK(CollectiveOptions::fromEnvironment().channels == 2);  // NCCLSHIM_NCHANNELS's default
  {
    ScopedCapture capture(NcclEnv{{"NCCL_MAX_NCHANNELS", "1"}});
    CHECK(CollectiveOptions::fromEnvironment().channels == 1);
    const std::vector<NcclSettingInForce> all = ncclSettingsInForce();
    const NcclSettingInForce* s = find(all, "NCCL_MAX_NCHANNELS");
    REQUIRE(s != nullptr);
    CHECK(s->source == NcclSource::kCapture);
    CHECK(s->read);
  }
  {
    ScopedEnv set("NCCL_MIN_NCHANNELS", "6");
    CHECK(CollectiveOptions::fromEnvironment().channels == 6);
    ScopedEnv cap("NCCL_MAX_NCHANNELS", "1");  // max first, then min: NCCL's order
    CHECK(CollectiveOptions::fromEnvironment().channels == 6);
    ScopedEnv override("NCCLSHIM_NCHANNELS", "3");
    CHECK(CollectiveOptions::fromEnvironment().channels == 3);
  }
}

}  // namespace
}  // namespace nshim
