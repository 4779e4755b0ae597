// `phynet --jobs FILE [--out DIR]`: runs the jobs of a job file (job_file.h) on one fabric. Each
// replay job is its own mpirun of phynet (its own MPI world, so its own communicators), first alone
// (unless its alone figures are given), then all jobs at once, each started at its offset from one
// shared start; background flows run during the shared run. The combined report goes to stdout and
// DIR/combined.txt. docs/fabric.md.
#pragma once

#include <string>

namespace nshim::phynet {

// True when argv asks for --jobs: this mode launches mpirun itself, so phynet starts no MPI for it,
// not even to say that its command line is wrong.
bool wantsJobs(int argc, char** argv);
// The jobs of the file (phynet's --jobs and --out, replay_options.h); the exit status.
int runJobs(const std::string& jobsPath, const std::string& outDir);

}  // namespace nshim::phynet
