// What the engine runs for a workload op, decided without running it: NCCL's algorithm, protocol
// and channels as the options force them, the trace recorded them or NCCL's tuner would choose
// them. The replay runs ops by it (phynet/op_runner.h) and the traffic model and the tools count
// and name by it.
#pragma once

#include "collectives/collectives.h"
#include "collectives/communicator.h"
#include "workload/workload.h"

namespace nshim::workload {

// How the engine runs `op` on a communicator of `nranks` ranks on `nnodes` nodes: what the options
// force (--algo / --proto, as NCCL_ALGO / NCCL_PROTO would), else what NCCL recorded for the call
// (its profiler plugin's nccl_task), else what NCCL's tuner chooses for the op's size and layout
// (collectives/nccl_tuner.h; options.ncclSystem). Point-to-point and alltoall: their recorded
// channels (0: as NCCL splits them, p2p_channels.h), in Simple.
struct OpChoice {
  Algorithm algorithm = Algorithm::kRing;  // allreduce: ring or tree; allgather, reducescatter: ring or pat
  Protocol protocol = Protocol::kSimple;
  int channels = 0;
};
OpChoice choiceOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes);
// The same as the report shows it: the algorithm ("ring", "tree", "chain", "p2p", ...), its
// channels where it uses them (0 otherwise), and the protocol.
struct OpDecision {
  const char* algorithm;
  int channels;
  Protocol protocol;
};
OpDecision decisionOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes);
// Whether an allgather / reducescatter of that choice runs NCCL's PAT (one rank per node), else the
// ring.
bool runsPatFor(const OpChoice& choice, int nranks, int nnodes);
// The allreduce plan of `op` (choiceOf's algorithm and channels).
AllReducePlan allReducePlanOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes);

}  // namespace nshim::workload
