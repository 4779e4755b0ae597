// The options a collective call is made with: the engine's tuning (slices, chunks, messages in
// flight, the timeout) and what it knows of NCCL's (algorithm, protocol, channels, point-to-point
// channels and chunks, PXN, the system NCCL's tuner sees), read from the environment.
#pragma once

#include <cstddef>
#include <optional>

#include "common/nccl_protocol.h"
#include "model/algorithm.h"
#include "model/nccl_tuner.h"

namespace nshim {

// Algorithm tuning; defaults follow NCCL's Simple protocol (1 MiB slices, 8 in flight) and are overridable by
// NCCLSHIM_SLICE_BYTES, NCCLSHIM_CHUNK_BYTES, NCCLSHIM_MAX_INFLIGHT, NCCLSHIM_TIMEOUT,
// NCCLSHIM_ALGO (auto|ring|tree; else NCCL_ALGO=Ring|Tree), NCCLSHIM_PROTO (else NCCL_PROTO=LL|LL128|Simple),
// NCCLSHIM_NCHANNELS and NCCLSHIM_RD_THRESHOLD.
struct CollectiveOptions {
  size_t sliceBytes = 1 << 20;    // one message on the wire
  size_t chunkBytes = 512 << 10;  // pipelining unit of broadcast/reduce chains (NCCL Simple step)
  int maxInflight = 8;            // messages in flight per peer
  double timeoutSeconds = 300;    // every wait of one operation
  // Allreduces up to this size on a power-of-two number of ranks use recursive doubling (log2 n
  // exchanges instead of 2(n-1) ring steps); 0 forces the ring (NCCLSHIM_ALGO=ring).
  size_t smallAllReduceBytes = 64 << 10;
  Algorithm algorithm = Algorithm::kAuto;
  // NCCL's channels: the tree runs channel c on tree c % 2 (a part of the buffer each). An op that
  // says how many channels NCCL used (a trace with NCCL's decisions) uses that number instead.
  int channels = 2;
  // Point-to-point (p2p_channels.h): NCCL's channels for point-to-point work (its p2pnChannels),
  // the most one peer's transfer may use (p2pnChannelsPerPeer; NCCLSHIM_P2P_CHANNELS_PER_PEER, else
  // NCCL_NCHANNELS_PER_NET_PEER), and the chunk sizes between nodes (NCCL_P2P_NET_CHUNKSIZE) and
  // within one (NCCL_P2P_NVL_CHUNKSIZE).
  // PXN (NCCLSHIM_PXN=1, phynet --pxn): an alltoall's blocks for another node go through the
  // node-mate on the destination's rail (pxn_alltoall.h); with a relay (phynet) a trace's own
  // send/recv too (pxn_relay.h).
  bool pxn = false;
  int p2pChannels = 2;
  int p2pChannelsPerPeer = 0;  // 0: as NCCL computes it (p2p_channels.h)
  size_t p2pNetChunkBytes = 128 << 10;
  size_t p2pLocalChunkBytes = 512 << 10;
  // The system NCCL's tuner sees (nccl_tuner.h) when an op's choice was not recorded: read from the
  // job's NCCL log (phynet --nccl-log); unset: the one NCCL described on the ground-truth machine
  // for the communicator's layout (TunerSystem::forLayout).
  std::optional<TunerSystem> ncclSystem;
  // NCCL's protocol forced for every collective (NCCLSHIM_PROTO, else NCCL_PROTO when it names one
  // protocol): kAuto runs what the caller says for the op (a trace's record), else Simple.
  Protocol protocol = Protocol::kAuto;
  // Whether the work NCCL's GPUs do beside the wire is done: the reductions' arithmetic and the
  // ring's local copy of a rank's own block (collective_support.h, reduceArrived, copyOwnBlock).
  // Always in the shim, whose callers read the results; a timing replay without --verify leaves it
  // out (phynet --gpu-work keeps it): NCCL's proxy, which is what the wire sees, only moves bytes.
  bool doGpuWork = true;

  static CollectiveOptions fromEnvironment();
};

}  // namespace nshim
