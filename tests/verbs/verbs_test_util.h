// Helpers of the [ibverbs] tests: whether an RDMA device exists (the tests skip cleanly when none
// does, which is the case outside the soft-RoCE VM of scripts/soft_roce_vm.sh), test options, and
// a skip that is a real SKIP on Catch2 v3 and a warning plus an early return on v2.
#pragma once

#include <string>

#include "common/env.h"
#include "tests/catch.h"
#include "transport/ibverbs/ibverbs_transport.h"

namespace nshim::verbstest {

// The device names, once per process ("" = none: skip).
inline const std::string& rdmaDevices() {
  static const std::string names = listIbverbsDevices();
  return names;
}

// Options for test jobs: NCCLSHIM_IB_HCA and NCCLSHIM_IB_GID_INDEX from the environment (the VM
// script sets rxe0), short timeouts, and the ring shape given.
inline IbverbsOptions testOptions(int qpsPerPeer = 1, int slots = 4, size_t slotBytes = 1 << 20) {
  IbverbsOptions options = IbverbsOptions::fromEnvironment();
  options.qpsPerPeer = qpsPerPeer;
  options.slots = slots;
  options.slotBytes = slotBytes;
  options.timeoutSeconds = 30;
  return options;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace nshim::verbstest

#ifdef SKIP
#define NSHIM_SKIP_TEST(message) SKIP(message)
#else
#define NSHIM_SKIP_TEST(message) \
  do {                           \
    WARN(message);               \
    return;                      \
  } while (0)
#endif

// Skips the test when this machine has no RDMA device.
#define NSHIM_REQUIRE_RDMA()                                                                         \
  do {                                                                                               \
    if (::nshim::verbstest::rdmaDevices().empty())                                                   \
      NSHIM_SKIP_TEST("SKIPPED: no RDMA device (run tests/suites/verbs_vm_tests.sh for soft-RoCE)"); \
  } while (0)
