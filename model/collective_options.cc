// Reads the options of collective calls from the environment (collective_options.h).
#include "model/collective_options.h"

#include <algorithm>
#include <string>

#include "common/env.h"
#include "common/log.h"
#include "common/settings.h"

namespace nshim {

namespace {

// `ours` when set (the settings table checks its value), else NCCL's `nccl` when it names one value;
// `*out` stays as it is otherwise.
template <typename Choice>
void readChoice(Setting ours, const char* nccl, bool (*parse)(std::string_view, Choice*), const char* values,
                Choice* out) {
  const std::string theirs = envString(nccl, "");
  if (settingIsSet(ours)) {
    (void)parse(settingString(ours), out);
  } else if (!theirs.empty() && !parse(theirs, out)) {
    NS_INFO("{}={} names no single choice of {}: choosing as usual", nccl, theirs, values);
  }
}

}  // namespace

CollectiveOptions CollectiveOptions::fromEnvironment() {
  CollectiveOptions options;
  options.sliceBytes = static_cast<size_t>(settingInt(Setting::NCCLSHIM_SLICE_BYTES));
  options.chunkBytes = static_cast<size_t>(settingInt(Setting::NCCLSHIM_CHUNK_BYTES));
  options.maxInflight = static_cast<int>(settingInt(Setting::NCCLSHIM_MAX_INFLIGHT));
  options.timeoutSeconds = settingDouble(Setting::NCCLSHIM_TIMEOUT);
  options.smallAllReduceBytes = static_cast<size_t>(settingInt(Setting::NCCLSHIM_RD_THRESHOLD));
  // NCCLSHIM_ALGO / NCCLSHIM_PROTO, else NCCL's own NCCL_ALGO / NCCL_PROTO when it names one
  // algorithm (Ring, Tree) or protocol (LL, LL128, Simple) as a job sets it.
  readChoice(Setting::NCCLSHIM_ALGO, "NCCL_ALGO", parseAlgorithm, "auto, ring, tree or pat", &options.algorithm);
  if (options.algorithm == Algorithm::kRing) options.smallAllReduceBytes = 0;
  readChoice(Setting::NCCLSHIM_PROTO, "NCCL_PROTO", parseProtocol, "auto, simple, ll or ll128", &options.protocol);
  options.channels = static_cast<int>(settingInt(Setting::NCCLSHIM_NCHANNELS));
  if (!settingIsSet(Setting::NCCLSHIM_NCHANNELS)) {
    // NCCL bounds its channels by NCCL_MAX_NCHANNELS and raises them to NCCL_MIN_NCHANNELS (the
    // environment's, else the capture's): the count a call without a recorded decision runs on.
    const int64_t most = envInt("NCCL_MAX_NCHANNELS", 0);
    const int64_t least = envInt("NCCL_MIN_NCHANNELS", 0);
    if (most > 0) options.channels = static_cast<int>(std::min<int64_t>(options.channels, most));
    if (least > 0)
      options.channels = static_cast<int>(std::min<int64_t>(std::max<int64_t>(options.channels, least), 64));
  }
  options.pxn = settingBool(Setting::NCCLSHIM_PXN);
  options.p2pChannels = static_cast<int>(settingInt(Setting::NCCLSHIM_P2P_CHANNELS));
  const int64_t perNetPeer = envInt("NCCL_NCHANNELS_PER_NET_PEER", options.p2pChannelsPerPeer);
  options.p2pChannelsPerPeer = std::max(0, static_cast<int>(settingIsSet(Setting::NCCLSHIM_P2P_CHANNELS_PER_PEER)
                                                                ? settingInt(Setting::NCCLSHIM_P2P_CHANNELS_PER_PEER)
                                                                : perNetPeer));
  options.p2pNetChunkBytes =
      std::max<size_t>(64, static_cast<size_t>(envBytes("NCCL_P2P_NET_CHUNKSIZE", options.p2pNetChunkBytes)));
  options.p2pLocalChunkBytes =
      std::max<size_t>(64, static_cast<size_t>(envBytes("NCCL_P2P_NVL_CHUNKSIZE", options.p2pLocalChunkBytes)));
  return options;
}

}  // namespace nshim
