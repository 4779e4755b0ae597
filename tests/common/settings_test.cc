// The settings table (common/settings.h): every default is a valid value; bad values are refused
// with the variable's name, the value and what it accepts (issue 39's cases: NCCLSHIM_TIMEOUT 1e10,
// inf, -5, nan; NCCLSHIM_NSOCKS_PERPEER 0, -1, 100000; a malformed bool), never clamped; sizes take
// the README's notation (256K); the validation pass lists every bad variable; the accessors and the
// options read through them keep the built-in defaults; deadlines never overflow.
#include "common/settings.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "common/clock.h"
#include "tests/catch.h"
#include "tests/common/scoped_env.h"
#include "transport/ibverbs/ibverbs_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim {
namespace {

Result<SettingValue> parse(Setting setting, const char* text) { return parseSetting(settingDecl(setting), text); }

// The refusal of `text`, which must name the variable and the value.
std::string refusal(Setting setting, const char* text) {
  Result<SettingValue> parsed = parse(setting, text);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == Code::kInvalidArgument);
  const std::string& message = parsed.status().message();
  CHECK(message.find(std::string(settingDecl(setting).name) + "=" + text) != std::string::npos);
  return message;
}

using testing::ScopedEnv;

}  // namespace

TEST_CASE("settings: one declaration each, every default valid", "[settings]") {
  std::set<std::string> names;
  for (const SettingDecl& decl : allSettings()) {
    INFO(decl.name);
    CHECK(std::string(decl.name).rfind("NCCLSHIM_", 0) == 0);
    CHECK(names.insert(decl.name).second);
    CHECK(std::string(decl.help).size() > 5);
    CHECK(findSetting(decl.name) == &settingDecl(decl.id));
    if (*decl.defaultText) CHECK(parseSetting(decl, decl.defaultText).ok());
  }
  CHECK(names.size() == allSettings().size());
  CHECK(findSetting("NCCLSHIM_NO_SUCH") == nullptr);
}

TEST_CASE("settings: NCCLSHIM_TIMEOUT refuses what would overflow a deadline or mean 0", "[settings]") {
  for (const char* bad : {"1e10", "inf", "-inf", "-5", "nan", "0", "abc", "5s"}) {
    INFO(bad);
    const std::string message = refusal(Setting::NCCLSHIM_TIMEOUT, bad);
    CHECK(message.find("from 0.001 to 1000000") != std::string::npos);
  }
  CHECK(parse(Setting::NCCLSHIM_TIMEOUT, "0.5")->real == 0.5);
  CHECK(parse(Setting::NCCLSHIM_TIMEOUT, "1e6")->real == 1e6);
}

TEST_CASE("settings: NCCLSHIM_NSOCKS_PERPEER out of range is refused, not clamped", "[settings]") {
  for (const char* bad : {"0", "-1", "100000", "2.5", "", "99999999999999999999"}) {
    if (!*bad) continue;  // empty is unset
    INFO(bad);
    CHECK(refusal(Setting::NCCLSHIM_NSOCKS_PERPEER, bad).find("an integer from 1 to 64") != std::string::npos);
  }
  CHECK(parse(Setting::NCCLSHIM_NSOCKS_PERPEER, "64")->number == 64);
  CHECK(parse(Setting::NCCLSHIM_PROFILER_EVENTS, "0x600")->number == 0x600);  // masks in hex
}

TEST_CASE("settings: sizes in the README's notation", "[settings]") {
  CHECK(parse(Setting::NCCLSHIM_SHM_RING_BYTES, "256K")->number == 256 << 10);
  CHECK(parse(Setting::NCCLSHIM_SHM_RING_BYTES, "1MB")->number == 1 << 20);
  CHECK(parse(Setting::NCCLSHIM_SHM_RING_BYTES, "65536")->number == 65536);
  CHECK(refusal(Setting::NCCLSHIM_SHM_RING_BYTES, "12K").find("not a power of two") != std::string::npos);
  CHECK(refusal(Setting::NCCLSHIM_SHM_RING_BYTES, "2T").find("not a size") != std::string::npos);
  refusal(Setting::NCCLSHIM_SHM_RING_BYTES, "1K");  // below 4K
  CHECK(parse(Setting::NCCLSHIM_SLICE_BYTES, "1.5M")->number == 3 << 19);
  refusal(Setting::NCCLSHIM_SLICE_BYTES, "0.5");
  refusal(Setting::NCCLSHIM_SLICE_BYTES, "-1M");
  CHECK(parse(Setting::NCCLSHIM_SOCKET_SNDBUF, "auto")->number == kSettingAuto);
  CHECK(parse(Setting::NCCLSHIM_SOCKET_SNDBUF, "0")->number == 0);
  refusal(Setting::NCCLSHIM_SOCKET_SNDBUF, "-1");
  refusal(Setting::NCCLSHIM_NSOCKS_PERPEER, "auto");  // only where the table says so
}

TEST_CASE("settings: booleans and choices", "[settings]") {
  for (const char* bad : {"2", "maybe", "-1", "yes please"}) {
    INFO(bad);
    CHECK(refusal(Setting::NCCLSHIM_SPIN_YIELD, bad).find("0 or 1") != std::string::npos);
  }
  CHECK(parse(Setting::NCCLSHIM_SPIN_YIELD, "off")->number == 0);
  CHECK(parse(Setting::NCCLSHIM_PXN, "TRUE")->number == 1);
  CHECK(parse(Setting::NCCLSHIM_TRANSPORT, "IB")->text == "ibverbs");  // an alias, any case
  CHECK(parse(Setting::NCCLSHIM_DEBUG, "info")->text == "INFO");
  CHECK(refusal(Setting::NCCLSHIM_MODE, "fast").find("one of auto, forward, gpufree") != std::string::npos);
  CHECK(parse(Setting::NCCLSHIM_HOSTID, "any text at all")->text == "any text at all");
}

TEST_CASE("settings: the validation pass names every bad variable and only those", "[settings]") {
  const char* environment[] = {
      "PATH=/bin",         "NCCLSHIM_TIMEOUT=inf", "NCCLSHIM_NSOCKS_PERPEER=0", "NCCLSHIM_SHM_RING_BYTES=256K",
      "NCCLSHIM_SPIN_US=", "NCCLSHIM_TIMEOT=5",    "NCCLSHIM_TEST_KEEP=1",      nullptr};
  Status status = validateSettings(environment);
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == Code::kInvalidArgument);
  CHECK(status.message().find("NCCLSHIM_TIMEOUT=inf") != std::string::npos);
  CHECK(status.message().find("NCCLSHIM_NSOCKS_PERPEER=0") != std::string::npos);
  CHECK(status.message().find("SHM_RING") == std::string::npos);
  CHECK(status.message().find("TIMEOT") == std::string::npos);  // unknown: a warning, not an error
  const char* good[] = {"NCCLSHIM_SHM_RING_BYTES=256K", "NCCLSHIM_TRANSPORT=shm", nullptr};
  CHECK(validateSettings(good).ok());
  CHECK(closestSettingName("NCCLSHIM_TIMEOT") == "NCCLSHIM_TIMEOUT");
  CHECK(closestSettingName("NCCLSHIM_NSOCKS_PER_PEER") == "NCCLSHIM_NSOCKS_PERPEER");
  CHECK(closestSettingName("NCCLSHIM_SOMETHING_ELSE_ENTIRELY") == "");
}

TEST_CASE("settings: accessors read the environment through the table", "[settings]") {
  {
    ScopedEnv env("NCCLSHIM_SHM_RING_BYTES", "1M");
    CHECK(ShmOptions::fromEnvironment().ringBytes == (1u << 20));
  }
  {
    ScopedEnv env("NCCLSHIM_NSOCKS_PERPEER", "5");
    CHECK(TcpOptions::fromEnvironment().socketsPerPeer == 5);
    CHECK(settingIsSet(Setting::NCCLSHIM_NSOCKS_PERPEER));
  }
  {
    ScopedEnv env("NCCLSHIM_TIMEOUT", "inf");  // no entry point refused it here: the default, warned
    CHECK(settingDouble(Setting::NCCLSHIM_TIMEOUT) == 300);
  }
}

TEST_CASE("settings: the options' built-in defaults are the table's", "[settings]") {
  std::vector<ScopedEnv> unset;
  unset.reserve(allSettings().size());
  for (const SettingDecl& decl : allSettings()) unset.emplace_back(decl.name, nullptr);
  const CollectiveOptions c = CollectiveOptions::fromEnvironment(), cBuiltIn;
  CHECK(c.sliceBytes == cBuiltIn.sliceBytes);
  CHECK(c.chunkBytes == cBuiltIn.chunkBytes);
  CHECK(c.maxInflight == cBuiltIn.maxInflight);
  CHECK(c.timeoutSeconds == cBuiltIn.timeoutSeconds);
  CHECK(c.smallAllReduceBytes == cBuiltIn.smallAllReduceBytes);
  CHECK(c.channels == cBuiltIn.channels);
  CHECK(c.p2pChannels == cBuiltIn.p2pChannels);
  CHECK(c.pxn == cBuiltIn.pxn);
  const ShmOptions s = ShmOptions::fromEnvironment(), sBuiltIn;
  CHECK(s.ringBytes == sBuiltIn.ringBytes);
  CHECK(s.spinMicroseconds == sBuiltIn.spinMicroseconds);
  const TcpOptions t = TcpOptions::fromEnvironment(), tBuiltIn;
  CHECK(t.socketsPerPeer == tBuiltIn.socketsPerPeer);
  CHECK(t.spinYield == tBuiltIn.spinYield);
  CHECK(t.sendBufferBytes == tBuiltIn.sendBufferBytes);
  CHECK(t.recvBufferBytes == tBuiltIn.recvBufferBytes);
  const IbverbsOptions i = IbverbsOptions::fromEnvironment(), iBuiltIn;
  CHECK(i.gidIndex == iBuiltIn.gidIndex);
  CHECK(i.slots == iBuiltIn.slots);
  CHECK(i.slotBytes == iBuiltIn.slotBytes);
  CHECK(i.zeroCopyMin == iBuiltIn.zeroCopyMin);
  CHECK(i.ibTimeout == iBuiltIn.ibTimeout);
  CHECK(i.retryCount == iBuiltIn.retryCount);
  CHECK(i.postThread == iBuiltIn.postThread);
}

TEST_CASE("deadlines: a huge, infinite or NaN timeout does not overflow", "[settings]") {
  CHECK_FALSE(Deadline::after(1e10).expired());
  CHECK_FALSE(Deadline::after(INFINITY).expired());
  CHECK(Deadline::after(1e10).remainingNs() > int64_t{1} << 60);
  CHECK(Deadline::after(std::nan("")).expired());
  CHECK(Deadline::after(-5).expired());
  CHECK(Deadline::after(1e6).remainingNs() > int64_t{999'000} * 1'000'000'000);
}

}  // namespace nshim
