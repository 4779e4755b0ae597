// How many channels NCCL spreads one point-to-point transfer over (its enqueue's split of a send or
// receive into parts): few bytes go on one channel; a transfer whose parts would exceed the chunk
// size doubles its channels, up to the channels per peer. Between nodes the chunk is
// NCCL_P2P_NET_CHUNKSIZE (128 KiB): on 4 nodes x 1 GPU NCCL sent an alltoall's 128 KiB per peer on
// one channel and 256 KiB on two (tests/data/nccl_4x1). Both ends compute the same number from
// the same byte count, so they cut a transfer into the same parts.
#pragma once

#include <cstddef>

#include "model/collective_options.h"

namespace nshim {

// The most channels one peer's transfer may use (NCCL 2.28's p2pnChannelsPerPeer): with peers on
// other nodes two per network peer, halved while all the ranks' transfers would put more than four
// on each point-to-point channel (2 on 4 ranks, 1 on 8: tests/data/nccl_tuning), unless
// options.p2pChannelsPerPeer says; a power of two, at most options.p2pChannels.
int p2pChannelsPerPeer(int nranks, int nnodes, const CollectiveOptions& options);
// Channels for a transfer of `bytes` on a communicator of `nranks` ranks on `nnodes` nodes.
int p2pChannelsFor(size_t bytes, int nranks, int nnodes, const CollectiveOptions& options);

}  // namespace nshim
