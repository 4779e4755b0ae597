// The groups of checks and the scenarios of the shim's process tests (nccl_api_test_program.cc runs
// them). Multi-process scenarios get one rank per process; single-process ones drive every rank.
#pragma once

#include "shim_test_harness.h"

namespace shimtest {

// Checks on one communicator of all ranks (multi-process scenario "api").
void runBasicChecks(const Context& ctx, ncclComm_t comm);
void runCollectiveChecks(const Context& ctx, ncclComm_t comm);
void runPointToPointChecks(const Context& ctx, ncclComm_t comm);
void runSplitChecks(const Context& ctx, ncclComm_t comm);
void runArgumentChecks(const Context& ctx, ncclComm_t comm);
// Creates further communicators (non-blocking config, scalable init, bad config).
void runConfigChecks(const Context& ctx);

// Failure scenarios (multi-process): ranks that disagree, a rank killed, ncclCommAbort; and (one
// process) a bad NCCLSHIM_TIMEOUT refused by the NCCL calls.
void scenarioMismatch(const Context& ctx);
void scenarioKilled(const Context& ctx);
void scenarioAbort(const Context& ctx);
// Ranks calling collectives of equal bytes but different types, operators or roots, with
// NCCLSHIM_CHECK_CALLS=1 (multi-process).
void scenarioCallCheck(const Context& ctx);
// Pointers the library never handed out, or took back (single process).
void scenarioHandles(const Context& ctx);
void scenarioBadSetting(const Context& ctx);

// Single-process scenarios: ncclCommInitAll (ranks as threads), and ncclCommInitRank of every rank
// inside one group from one thread.
void scenarioInitAll(const Context& ctx);
void scenarioGroupInit(const Context& ctx);

}  // namespace shimtest
