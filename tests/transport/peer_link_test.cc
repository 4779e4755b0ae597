// PeerLink::nextLink, the one choice of connection for every message of the network transports: a
// request's channel picks its link (or group of links), a group's messages take its links in turn
// (NCCL_IB_QPS_PER_CONNECTION over ibverbs), and a receiver posting a channel's messages in the
// sender's order meets every one on the link it was sent on; with NCCL_IB_SPLIT_DATA_ON_QPS=1 a
// message is cut over all links of its group in NCCL's parts (split_data_on_qps.h).
#include <vector>

#include "tests/catch.h"
#include "transport/core/peer_link.h"
#include "transport/ibverbs/split_data_on_qps.h"

namespace nshim {
namespace {

// A request on `channel` (Request holds atomics: one per call site, reused).
const Request& onChannel(int channel) {
  static thread_local Request req;
  req.channel = channel;
  return req;
}

TEST_CASE("nextLink: one link per group is the channel's, else round robin", "[transport][peerlink]") {
  PeerLink link;
  std::vector<int> sent;
  for (int channel : {0, 1, 2, 3, 1}) sent.push_back(link.nextLink(onChannel(channel), true, 2));
  CHECK(sent == std::vector<int>{0, 1, 0, 1, 1});
  std::vector<int> unchanneled;
  for (int i = 0; i < 5; ++i) unchanneled.push_back(link.nextLink(onChannel(-1), true, 3));
  CHECK(unchanneled == std::vector<int>{5 % 3, 6 % 3, 7 % 3, 8 % 3, 9 % 3});  // the pair's send count goes on
  CHECK(link.sentMessages.load() == 10);
  CHECK(link.sendLinks() == 3);
}

TEST_CASE("nextLink: a channel's messages take its group's links in turn", "[transport][peerlink]") {
  // 2 groups of 3 links (NCCLSHIM_IB_QPS_PER_PEER=2, NCCL_IB_QPS_PER_CONNECTION=3): channel 0 and 2
  // share group 0 (links 0-2), channels 1 and 3 group 1 (links 3-5); each group keeps its own turn.
  PeerLink sender;
  const std::vector<int> channels = {0, 1, 0, 0, 1, 2, 3, 0, 1, 1};
  std::vector<int> sent;
  for (int channel : channels) sent.push_back(sender.nextLink(onChannel(channel), true, 6, 3));
  CHECK(sent == std::vector<int>{0, 3, 1, 2, 4, 0, 5, 1, 3, 4});
  CHECK(sender.sendLinks() == 6);
  // The receiver posts the same channels in the same order: every message meets its link.
  PeerLink receiver;
  std::vector<int> received;
  for (int channel : channels) received.push_back(receiver.nextLink(onChannel(channel), false, 6, 3));
  CHECK(received == sent);
  CHECK(receiver.sentMessages.load() == 0);  // receives are not counted as sends
}

TEST_CASE("nextSplitGroup: a message takes all links of its channel's group", "[transport][peerlink]") {
  PeerLink sender;
  std::vector<int> firsts;
  for (int channel : {0, 1, 2, -1, -1}) firsts.push_back(sender.nextSplitGroup(onChannel(channel), true, 6, 3));
  CHECK(firsts == std::vector<int>{0, 3, 0, 3, 0});  // the unchanneled go round robin on the pair's count
  CHECK(sender.sentMessages.load() == 5);            // one message each, not one per part
  CHECK(sender.sendLinks() == 6);
}

// NCCL's cut (net_ib p2p.cc, ncclIbMultiSend): ceil(ceil(bytes / qps) / 128) * 128 bytes per QP,
// the rest to the last, QPs past the end get nothing. Worked by hand.
TEST_CASE("split data on QPs: NCCL's parts, whole 128-byte blocks, empty ones at the end", "[transport][peerlink]") {
  using ib::qpSplitPart;
  auto parts = [](size_t bytes, int qps) {
    std::vector<size_t> out;
    size_t next = 0;
    for (int i = 0; i < qps; ++i) {
      ib::QpSplitPart part = qpSplitPart(bytes, qps, i);
      CHECK(part.offset == next);  // contiguous, in order
      next = part.offset + part.bytes;
      out.push_back(part.bytes);
    }
    CHECK(next == bytes);  // and they cover the message
    return out;
  };
  CHECK(parts(5000, 3) == std::vector<size_t>{1792, 1792, 1416});  // ceil(5000/3) = 1667 -> 1792
  CHECK(parts(100, 3) == std::vector<size_t>{100, 0, 0});          // one 128-byte block holds it all
  CHECK(parts(0, 2) == std::vector<size_t>{0, 0});
  CHECK(parts(384, 4) == std::vector<size_t>{128, 128, 128, 0});  // ceil(384/4) = 96 -> 128
  CHECK(parts(1 << 20, 4) == std::vector<size_t>{262144, 262144, 262144, 262144});
  CHECK(parts(1000, 1) == std::vector<size_t>{1000});
}

}  // namespace
}  // namespace nshim
