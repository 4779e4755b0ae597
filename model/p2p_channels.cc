// NCCL's channels per point-to-point transfer (p2p_channels.h).
#include "model/p2p_channels.h"

#include <algorithm>

namespace nshim {

int p2pChannelsPerPeer(int nranks, int nnodes, const CollectiveOptions& options) {
  const int channels = std::max(1, options.p2pChannels);
  int perPeer = channels;  // peers within a node (NVLink) take as many as there are
  if (nnodes > 1) {
    int perNetPeer = options.p2pChannelsPerPeer;
    if (perNetPeer <= 0) {
      // Two per network peer, fewer when all the peers' transfers together would put more than
      // four on each channel.
      perNetPeer = 2;
      while (perNetPeer > 1 && static_cast<long>(perNetPeer) * nranks > 4L * channels) perNetPeer /= 2;
    }
    perPeer = std::min(perPeer, perNetPeer);
  }
  int powerOfTwo = 1;
  while (powerOfTwo < perPeer) powerOfTwo *= 2;
  return std::min(powerOfTwo, channels);
}

int p2pChannelsFor(size_t bytes, int nranks, int nnodes, const CollectiveOptions& options) {
  if (bytes == 0) return 1;
  const int most = p2pChannelsPerPeer(nranks, nnodes, options);
  // When every peer of the rank has a transfer, each first gets as many channels as the
  // communicator's point-to-point channels allow for all of them together.
  int fewest = most;
  while (fewest > 1 && static_cast<long>(fewest) * nranks > options.p2pChannels) fewest /= 2;
  const size_t chunk = nnodes > 1 ? options.p2pNetChunkBytes : options.p2pLocalChunkBytes;
  const size_t minPart = std::max<size_t>(1, nnodes > 1 ? chunk / 2 : chunk / 8);
  const size_t maxPart = nnodes > 1 ? chunk : chunk * 32;
  int channels = static_cast<int>(std::min<size_t>(fewest, (bytes + minPart - 1) / minPart));
  size_t part = std::max(minPart, (bytes + channels - 1) / channels);
  while (part > maxPart && channels <= most / 2) {
    channels *= 2;
    part = (bytes + channels - 1) / channels;
  }
  return channels;
}

}  // namespace nshim
