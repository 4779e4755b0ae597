// `phynet --jobs FILE [--out DIR]`: runs the jobs of a job file (job_file.h) on one fabric. Each
// replay job is its own mpirun of phynet (its own MPI world, so its own communicators), first alone
// (unless its alone figures are given), then all jobs at once, each started at its offset from one
// shared start; background flows run during the shared run. The combined report goes to stdout and
// DIR/combined.txt. docs/fabric.md.
#pragma once

namespace nshim::phynet {

// True when argv asks for --jobs (checked before MPI is started: this mode launches mpirun itself).
bool wantsJobs(int argc, char** argv);
int runJobs(int argc, char** argv);

}  // namespace nshim::phynet
