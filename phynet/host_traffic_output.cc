// Text and JSON for the host / NIC traffic (host_traffic_output.h).
#include "phynet/host_traffic_output.h"

#include "phynet/report_output.h"

namespace nshim::phynet {
namespace {

std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    // consecutive ranks as ranges: 0-3,8
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += fmt::format("{}{}", text.empty() ? "" : ",",
                        j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j;
  }
  return text;
}

std::string trafficJson(const Traffic& t) {
  return fmt::format("{{\"bytes\":{},\"wire_bytes\":{},\"messages\":{},\"model_bytes\":{},\"flows\":{}}}", t.bytes,
                     t.wire, t.messages, t.model, t.flows);
}

}  // namespace

void printHostTraffic(FILE* out, const ReplayReport& r, int maxRows) {
  const HostTraffic& t = r.traffic;
  if (t.nics.empty()) return;
  fmt::print(out,
             "#\n# traffic per host and NIC, to and from other hosts ({} hosts; bytes = payload, model = the "
             "algorithms' formula, wire = with the transport's framing, msgs = messages)\n",
             t.hosts);
  fmt::print(out, "# {:<12} {:<10} {:<10} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9} {:>9}\n", "host", "nic",
             "ranks", "sent", "model_sent", "received", "model_recv", "wire_sent", "wire_recv", "msgs_sent",
             "msgs_recv");
  int shown = 0;
  for (const NicTraffic& n : t.nics) {
    if (shown++ >= maxRows) break;
    fmt::print(out, "  {:<12} {:<10} {:<10} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9} {:>9}\n", n.host, n.nic,
               rankList(n.ranks), n.sent.bytes, n.sent.model, n.received.bytes, n.received.model, n.sent.wire,
               n.received.wire, n.sent.messages, n.received.messages);
  }
  if (t.nics.size() > static_cast<size_t>(maxRows)) {
    fmt::print(out, "#  ... {} more NICs (all are in --json)\n", t.nics.size() - maxRows);
  }
  fmt::print(out,
             "# traffic between hosts (sender -> receiver; same host = not on the fabric; flows = connections "
             "that carried data, one per NCCL channel and rank pair)\n");
  fmt::print(out, "# {:<12}    {:<12} {:>14} {:>14} {:>14} {:>9} {:>6}\n", "from", "to", "bytes", "model", "wire",
             "msgs", "flows");
  shown = 0;
  for (const HostPairTraffic& p : t.pairs) {
    if (shown++ >= maxRows) break;
    fmt::print(out, "  {:<12} -> {:<12} {:>14} {:>14} {:>14} {:>9} {:>6}{}\n", p.from, p.to, p.traffic.bytes,
               p.traffic.model, p.traffic.wire, p.traffic.messages, p.traffic.flows,
               p.from == p.to ? "  (same host)" : "");
  }
  if (t.pairs.size() > static_cast<size_t>(maxRows)) {
    fmt::print(out, "#  ... {} more host pairs (all are in --json)\n", t.pairs.size() - maxRows);
  }
}

std::string rankEndpointJson(const ReplayReport& r, int rank) {
  if (r.endpoints.size() != r.ranks.size() || rank >= static_cast<int>(r.endpoints.size())) return "";
  const RankEndpoint& e = r.endpoints[rank];
  std::string text = fmt::format(",\"host\":{},\"host_id\":{},\"local_rank\":{},\"nic\":{},\"address\":{}",
                                 jsonQuoted(r.traffic.hostOfRank[rank]), jsonQuoted(e.hostId), e.localRank,
                                 jsonQuoted(e.nic), jsonQuoted(e.address));
  if (!e.gid.empty()) text += fmt::format(",\"port\":{},\"gid\":{}", e.port, jsonQuoted(e.gid));
  text += ",\"peer_bytes\":[";
  bool first = true;
  const std::vector<PeerTraffic>& peers = r.ranks[rank].peers;
  for (size_t p = 0; p < peers.size(); ++p) {
    const PeerTraffic& out = peers[p];
    const PeerTraffic in = p < r.ranks.size() && static_cast<size_t>(rank) < r.ranks[p].peers.size()
                               ? r.ranks[p].peers[rank]
                               : PeerTraffic{};
    if (out.sent == 0 && out.wire == 0 && out.model == 0 && in.sent == 0 && in.wire == 0 && in.model == 0) continue;
    text += fmt::format(
        "{}{{\"peer\":{},\"sent\":{},\"received\":{},\"wire_sent\":{},\"wire_received\":{},"
        "\"messages_sent\":{},\"messages_received\":{},\"model_sent\":{},\"model_received\":{},"
        "\"links\":{}}}",
        first ? "" : ",", p, out.sent, in.sent, out.wire, in.wire, out.messages, in.messages, out.model, in.model,
        out.links);
    first = false;
  }
  return text + "]";
}

std::string hostTrafficJson(const ReplayReport& r) {
  const HostTraffic& t = r.traffic;
  if (t.nics.empty()) return "";
  std::string text = fmt::format(",\n\"hosts\":{},\n\"nics\":[", t.hosts);
  for (size_t i = 0; i < t.nics.size(); ++i) {
    const NicTraffic& n = t.nics[i];
    std::string ranks;
    for (int rank : n.ranks) ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", rank);
    text += fmt::format("{}\n{{\"host\":{},\"nic\":{},\"ranks\":[{}],\"sent\":{},\"received\":{}}}", i ? "," : "",
                        jsonQuoted(n.host), jsonQuoted(n.nic), ranks, trafficJson(n.sent), trafficJson(n.received));
  }
  text += "],\n\"host_pairs\":[";
  for (size_t i = 0; i < t.pairs.size(); ++i) {
    const HostPairTraffic& p = t.pairs[i];
    text +=
        fmt::format("{}\n{{\"from\":{},\"to\":{},\"same_host\":{},\"traffic\":{}}}", i ? "," : "", jsonQuoted(p.from),
                    jsonQuoted(p.to), p.from == p.to ? "true" : "false", trafficJson(p.traffic));
  }
  return text + "]";
}

}  // namespace nshim::phynet
