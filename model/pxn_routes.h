// NCCL's PXN routes (NCCL_PXN): which rank carries a block between nodes, the sender itself or its
// node-mate on the destination's rail. The alltoall (collectives/pxn_alltoall.h), the relay of a
// trace's send/recv (collectives/pxn_relay.h) and the traffic model route by these.
#pragma once

#include "model/collective_options.h"
#include "model/node_layout.h"

namespace nshim {

// Whether PXN is asked for (CollectiveOptions::pxn) and means anything: several nodes of which some
// hold several ranks.
bool pxnApplies(const CollectiveOptions& options, const NodeLayout& nodes);

// The rank that carries rank `from`'s block for rank `to` between nodes: `from` itself, or its
// node-mate with `to`'s local index (PXN). Equal to `to` when both are on one node.
int pxnRelayOf(const NodeLayout& nodes, int from, int to);

// Where `from` sends its block for `to`: `to` itself, or the relay.
int pxnFirstHopOf(const NodeLayout& nodes, int from, int to);

// Whether `from`'s block for `to` goes through a relay (another node, another rail, and a node-mate
// of `from` on `to`'s rail).
inline bool pxnRelayed(const NodeLayout& nodes, int from, int to) { return pxnFirstHopOf(nodes, from, to) != to; }

}  // namespace nshim
