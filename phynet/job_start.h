// The shared start of the jobs of `phynet --jobs`: each job's ranks wait, once connected, until the
// wall-clock time the launcher gave them (NCCLSHIM_JOB_START_AT), so that jobs launched by separate
// mpiruns replay at the same moment whatever their launch took.
#pragma once

namespace nshim::phynet {

// Sleeps until NCCLSHIM_JOB_START_AT (no wait when unset or past); returns how late this rank
// reached it in seconds (0 when on time or unset).
double waitForJobStart();

}  // namespace nshim::phynet
