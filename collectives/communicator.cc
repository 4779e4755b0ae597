// Reads the algorithm tuning from the environment; grows (and registers) the scratch memory.
#include "collectives/communicator.h"

#include <algorithm>

#include "common/env.h"
#include "common/log.h"

namespace nshim {

namespace {

// `ours` when set (a value that is none of `values` is warned about), else NCCL's `nccl` when it
// names one value; `*out` stays as it is otherwise.
template <typename Choice>
void readChoice(const char* ours, const char* nccl, bool (*parse)(std::string_view, Choice*), const char* values,
                Choice* out) {
  const std::string mine = envString(ours, "");
  const std::string theirs = envString(nccl, "");
  if (!mine.empty()) {
    if (!parse(mine, out)) NS_WARN("{}={} is not {}; using auto", ours, mine, values);
  } else if (!theirs.empty() && !parse(theirs, out)) {
    NS_INFO("{}={} names no single choice of {}: choosing as usual", nccl, theirs, values);
  }
}

}  // namespace

CollectiveOptions CollectiveOptions::fromEnvironment() {
  CollectiveOptions options;
  options.sliceBytes = static_cast<size_t>(envBytes("NCCLSHIM_SLICE_BYTES", options.sliceBytes));
  options.chunkBytes = static_cast<size_t>(envBytes("NCCLSHIM_CHUNK_BYTES", options.chunkBytes));
  options.maxInflight = static_cast<int>(envInt("NCCLSHIM_MAX_INFLIGHT", options.maxInflight));
  options.timeoutSeconds = envDouble("NCCLSHIM_TIMEOUT", options.timeoutSeconds);
  options.smallAllReduceBytes =
      static_cast<size_t>(envBytes("NCCLSHIM_RD_THRESHOLD", options.smallAllReduceBytes));
  // NCCLSHIM_ALGO / NCCLSHIM_PROTO, else NCCL's own NCCL_ALGO / NCCL_PROTO when it names one
  // algorithm (Ring, Tree) or protocol (LL, LL128, Simple) as a job sets it.
  readChoice("NCCLSHIM_ALGO", "NCCL_ALGO", parseAlgorithm, "auto, ring, tree or pat", &options.algorithm);
  if (options.algorithm == Algorithm::kRing) options.smallAllReduceBytes = 0;
  readChoice("NCCLSHIM_PROTO", "NCCL_PROTO", parseProtocol, "auto, simple, ll or ll128", &options.protocol);
  options.channels = static_cast<int>(envInt("NCCLSHIM_NCHANNELS", options.channels));
  if (options.channels < 1) options.channels = 1;
  options.pxn = envInt("NCCLSHIM_PXN", 0) != 0;
  options.p2pChannels = std::max(1, static_cast<int>(envInt("NCCLSHIM_P2P_CHANNELS", options.p2pChannels)));
  const int64_t perNetPeer = envInt("NCCL_NCHANNELS_PER_NET_PEER", options.p2pChannelsPerPeer);
  options.p2pChannelsPerPeer = std::max(0, static_cast<int>(envInt("NCCLSHIM_P2P_CHANNELS_PER_PEER", perNetPeer)));
  options.p2pNetChunkBytes =
      std::max<size_t>(64, static_cast<size_t>(envBytes("NCCL_P2P_NET_CHUNKSIZE", options.p2pNetChunkBytes)));
  options.p2pLocalChunkBytes =
      std::max<size_t>(64, static_cast<size_t>(envBytes("NCCL_P2P_NVL_CHUNKSIZE", options.p2pLocalChunkBytes)));
  if (options.sliceBytes < 64) {
    NS_WARN("NCCLSHIM_SLICE_BYTES={} too small; using 64", options.sliceBytes);
    options.sliceBytes = 64;
  }
  if (options.chunkBytes < 64) options.chunkBytes = 64;
  if (options.maxInflight < 1) options.maxInflight = 1;
  return options;
}

char* Communicator::scratch(size_t bytes) {
  if (scratch_.size() >= bytes) return scratch_.data();
  scratchRegistration_.reset();
  scratch_.resize(bytes);
  auto registration = MemoryRegistration::create(*transport_, scratch_.data(), scratch_.size());
  if (registration.ok()) {
    scratchRegistration_ = std::move(registration).value();
  } else {
    NS_INFO("scratch of {} bytes not registered (staged receives copy): {}", bytes, registration.status().message());
  }
  return scratch_.data();
}

}  // namespace nshim
