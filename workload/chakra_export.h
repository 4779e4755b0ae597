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
// group). Node ids count from 0 in each file.
// The comm-group file names every communicator: {"1": [global ranks], "2": ...}, the key being the
// nodes' pg_name (the communicator's index in Workload::comms, from 1).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

struct ChakraExport {
  std::vector<std::string> rankFiles;  // the bytes of NAME.<rank>.et, by global rank
  std::string commGroupJson;
  size_t nodes = 0;                    // all files together
  size_t commNodes = 0;
};

// Needs every rank's operations (Workload::onlyRank -1).
Result<ChakraExport> exportChakra(const Workload& workload);

}  // namespace nshim::workload
