// Writer of Chakra execution traces (ASTRA-sim's workload input) from a replay Workload: one file per
// rank and the comm-group file ASTRA-sim takes with --comm-group-configuration.
//
// Per rank, in issue order: a COMP_NODE for the compute time recorded before an operation
// (WorkOp::computeNs, as duration_micros, when at least 1 µs), then the operation: a COMM_COLL_NODE
// (comm_type, comm_size = the nccl-tests size in bytes, the whole buffer, as chakra_workload.h reads it;
// pg_name; root for rooted collectives) or a COMM_SEND_NODE / COMM_RECV_NODE (comm_src, comm_dst as
// global ranks, comm_size, comm_tag = the number of earlier transfers from the same source to the same
// destination, so that the k-th send meets the k-th receive). A recorded duration becomes the node's
// duration_micros. Dependencies: compute nodes form one chain (the compute stream); an operation
// depends on the latest compute node before it (data_deps: its input) and on the previous operation
// of its communicator (ctrl_deps: one NCCL stream per communicator, as PyTorch gives each process
// group). A compute node does not wait for the operation before it: the capture's gap runs from the
// host's return from one call to its next call, while the GPU may still run the first (as a
// data-parallel backward overlaps its gradient all-reduces). Node ids count from 0 in each file.
// Groups as ASTRA-sim takes them: pg_name "0" is the whole world (in no file); the other
// communicators of more than one rank are "1", "2", ... in the comm-group file ({"1": [global ranks],
// ...}). A collective on a one-rank communicator moves nothing and would never complete in ASTRA-sim
// (a group of one has no phases): it becomes a COMP_NODE of its recorded duration.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

struct ChakraExport {
  std::vector<std::string> rankFiles;  // the bytes of NAME.<rank>.et, by global rank
  std::string commGroupJson;
  size_t nodes = 0;  // all files together
  size_t commNodes = 0;
  size_t oneRankOps = 0;  // collectives of one rank, written as compute nodes
};

// Needs every rank's operations (Workload::onlyRank -1).
Result<ChakraExport> exportChakra(const Workload& workload);

}  // namespace nshim::workload
