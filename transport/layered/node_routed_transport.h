// One communicator over two transports: peers on this rank's node through the intra-node one
// (shared memory), every other peer through the network one (TCP or ibverbs). NCCL moves the
// traffic between the GPUs of a node over NVLink and only the hops between nodes reach a NIC; a
// replay that routes by node keeps that traffic off the fabric in the same way. Both transports
// use the communicator's rank numbering; waits drive both.
#pragma once

#include <memory>
#include <vector>

#include "transport/core/transport.h"

namespace nshim {

// `sameNode[r]`: whether comm rank r is on this rank's node (sameNode[rank] is true). `intra` must
// reach every such peer, `net` every other one.
std::unique_ptr<Transport> createNodeRoutedTransport(std::unique_ptr<Transport> intra, std::unique_ptr<Transport> net,
                                                     std::vector<bool> sameNode);

}  // namespace nshim
