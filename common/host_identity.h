// Which host a process runs on, as NCCL tells nodes apart (its host hash, NCCL_HOSTID): processes in
// separate network namespaces or VMs often share a hostname, so the identity also carries the
// kernel's boot id (one per kernel: a VM) and the network namespace (one per namespace "host").
// NCCLSHIM_HOSTID overrides it, as NCCL_HOSTID does for NCCL. Also the launcher's local rank.
#pragma once

#include <string>

namespace nshim {

// NCCLSHIM_HOSTID when set, else "<hostname>/<boot id>/<network namespace>". Equal for two
// processes exactly when they run on the same host (same kernel, same network namespace).
std::string hostIdentity();

// This process's hostname ("?" when unreadable).
std::string hostName();

// The launcher's rank of this process among those of its host: OMPI_COMM_WORLD_LOCAL_RANK,
// LOCAL_RANK (torchrun), SLURM_LOCALID, MPI_LOCALRANKID (MPICH), or NCCLSHIM_LOCAL_RANK; -1 when
// none is set or valid.
int localRankFromEnvironment();

}  // namespace nshim
