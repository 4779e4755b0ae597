// How `ncclshim perf` gets its ranks: -np N forks N local processes that share a unique id made
// by the parent; under mpirun (OMPI/PMI/Slurm variables) each process is one rank and rank 0 hands
// the id to the others through a file (id_file.h: private to this user unless --id-file names one).
#pragma once

#include "tools/perf/perf_options.h"

namespace nshim::perf {

int perfMain(int argc, char** argv);

}  // namespace nshim::perf
