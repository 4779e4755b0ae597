// The replay's traffic by host and NIC, as a network engineer reads a fabric: for each (host, NIC)
// the bytes and messages it sent to and received from other hosts (what crossed that NIC; traffic
// between ranks of one host never reaches a NIC), and for each ordered pair of hosts what went from
// one to the other, each with the traffic model's figure beside the measured one. Built on rank 0
// from every rank's endpoint (rank_endpoint.h) and per-peer counters (replay.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phynet/rank_endpoint.h"
#include "phynet/replay.h"

namespace nshim::phynet {

struct Traffic {
  uint64_t bytes = 0;  // payload
  uint64_t wire = 0;   // with the transport's framing
  uint64_t messages = 0;
  uint64_t model = 0;  // the model's payload bytes
  uint64_t flows = 0;  // connections that carried data (PeerTraffic::links)
  void add(const PeerTraffic& t) {
    bytes += t.sent;
    wire += t.wire;
    messages += t.messages;
    model += t.model;
    flows += t.links;
  }
};

struct NicTraffic {
  std::string host;  // label
  std::string nic;
  std::vector<int> ranks;  // global ranks on this NIC
  Traffic sent;            // to ranks on other hosts
  Traffic received;        // from ranks on other hosts
};

struct HostPairTraffic {
  std::string from, to;  // labels; from == to: between ranks of one host (not on the fabric)
  Traffic traffic;
};

struct HostTraffic {
  std::vector<std::string> hostOfRank;  // label per global rank
  std::vector<NicTraffic> nics;         // by host, then NIC, in order of first rank
  std::vector<HostPairTraffic> pairs;   // every ordered pair that exchanged anything (or was modelled to)
  int hosts = 0;
};

// `endpoints` and `counters` have one entry per global rank (counters[r].peers by global rank).
HostTraffic buildHostTraffic(const std::vector<RankEndpoint>& endpoints, const std::vector<RankCounters>& counters);

}  // namespace nshim::phynet
