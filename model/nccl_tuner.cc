// NCCL 2.28's cost model and choice (nccl_tuner.h). The constants are NCCL's published defaults
// (its tuner constants: base and per-link latencies in us, bandwidth caps in GB/s).
#include "model/nccl_tuner.h"

#include <algorithm>
#include <fstream>
#include <regex>

namespace nshim {
namespace {

// Indices as NCCL orders them.
enum Proto { kLl = 0, kLl128 = 1, kSimple = 2 };
enum Algo { kTreeAlgo = 0, kRingAlgo = 1 };
enum Link { kNvlink = 0, kPci = 1, kNet = 2 };

constexpr double kBaseLatency[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
constexpr double kLinkLatency[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},   // NVLink: tree, ring
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},    // PCI
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},  // network
};
// [GPU generation or, between nodes, CPU vendor][1 node, 2 nodes, more]
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kRingLl128MaxBwPerChannel[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 34.6, 73.4}};
constexpr double kTreeLl128MaxBwPerChannel[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kTreeMaxBwPerChannel[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// The tree allreduce's bandwidth off the model for medium sizes: by protocol, for 64 B << k.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
constexpr double kPciBw = 24.0;  // GB/s: below it the ring's Simple runs 256 threads

int log2Floor(size_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

int generationIndex(int computeCapability) {
  return computeCapability >= 100 ? 3 : computeCapability >= 90 ? 2 : computeCapability >= 80 ? 1 : 0;
}

int protoIndex(Protocol p) { return p == Protocol::kLL ? kLl : p == Protocol::kLL128 ? kLl128 : kSimple; }

bool runs(TunedFunc func, Algorithm algorithm, const TunerSystem& s) {
  if (algorithm == Algorithm::kPat) {
    return (func == TunedFunc::kAllGather || func == TunedFunc::kReduceScatter) && s.nnodes == s.nranks;
  }
  return algorithm == Algorithm::kRing || (algorithm == Algorithm::kTree && func == TunedFunc::kAllReduce);
}

// PAT (Simple only) on the tree's graph: a quarter below the graph's bandwidth, no bus-to-algorithm
// conversion; a base latency, a logarithmic network part (the tree's network latency / 3.5) and a
// linear part per rank.
TunerCost patCost(Protocol protocol, const TunerSystem& s) {
  if (protocol != Protocol::kSimple) return {};
  const TunerGraph& graph = s.tree;
  const double busBw = graph.channels * (s.nnodes <= 2 ? graph.bwIntra : graph.bwInter) * .75;
  const double latency =
      8.0 + log2Floor(static_cast<size_t>(s.nnodes)) * (kLinkLatency[kNet][kTreeAlgo][kSimple] / 3.5) + s.nranks * 2.8;
  return {latency, busBw};
}

int stepsOf(TunedFunc func, int nranks) {
  if (func == TunedFunc::kAllReduce) return 2 * (nranks - 1);
  if (func == TunedFunc::kAllGather || func == TunedFunc::kReduceScatter) return nranks - 1;
  return nranks;
}

int maxThreads(Algorithm algorithm, Protocol protocol, const TunerSystem& s) {
  if (protocol == Protocol::kLL) return 512;
  if (protocol == Protocol::kLL128) return 640;
  if (algorithm == Algorithm::kTree) return 512;
  return s.ring.bwIntra * s.ring.channels <= kPciBw ? 256 : 512;
}

}  // namespace

TunerSystem TunerSystem::forLayout(int nranks, int nnodes) {
  TunerSystem s;
  s.nranks = nranks;
  s.nnodes = std::max(1, nnodes);
  const bool severalPerNode = nranks > s.nnodes;
  s.ring = TunerGraph{1, 1.2, 1.2, severalPerNode, false, 4, true};
  s.tree = TunerGraph{1, 2.4, 1.2, severalPerNode, false, severalPerNode ? 1 : 3, true};
  return s;
}

TunerCost ncclCost(TunedFunc func, Algorithm algorithm, Protocol protocol, const TunerSystem& s) {
  if (s.nranks <= 1 || !runs(func, algorithm, s) || protocol == Protocol::kAuto) return {};
  if (algorithm == Algorithm::kPat) return patCost(protocol, s);
  const TunerGraph& graph = algorithm == Algorithm::kTree ? s.tree : s.ring;
  const int a = algorithm == Algorithm::kTree ? kTreeAlgo : kRingAlgo;
  const int p = protoIndex(protocol);
  const int gen = generationIndex(s.computeCapability);
  const int scale = s.nnodes <= 2 ? s.nnodes - 1 : 2;
  const double llMaxBw = kLlMaxBw[s.nnodes == 1 ? gen : (s.amdCpu ? 1 : 0)][scale];
  const double ppn = static_cast<double>(s.nranks) / s.nnodes;
  const int nsteps = stepsOf(func, s.nranks);

  double busBw = graph.channels * (s.nnodes <= 2 ? graph.bwIntra : graph.bwInter);
  if (a == kRingAlgo && p == kLl) busBw = std::min(llMaxBw, busBw * .5);
  if (a == kRingAlgo && p == kLl128) {
    busBw = std::min(busBw * .92, graph.channels * kRingLl128MaxBwPerChannel[gen][scale]);
  }
  if (a == kTreeAlgo && func == TunedFunc::kAllReduce) {
    busBw = std::min(busBw * .92, graph.channels * kTreeMaxBwPerChannel[gen][scale]);
  }
  if (a == kTreeAlgo && p == kLl) busBw = std::min(busBw / 3.8, llMaxBw);
  if (a == kTreeAlgo && p == kLl128) {
    busBw = std::min(busBw * (s.nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     graph.channels * kTreeLl128MaxBwPerChannel[gen][scale]);
  }
  if (a == kTreeAlgo && s.tree.pattern == 3) busBw *= .85;
  busBw *= a == kRingAlgo ? static_cast<double>(s.nranks) / nsteps : .5;  // bus to algorithm bandwidth
  // LL128 only over paths that keep its 128-byte lines whole, on one GPU generation from Volta up.
  if (p == kLl128 && !(graph.ll128Paths && graph.nvlinkIntra && s.computeCapability >= 70)) busBw = 0;

  const int intraLink = graph.nvlinkIntra ? kNvlink : kPci;
  double intraLat = kLinkLatency[intraLink][a][p];
  const double interLat = kLinkLatency[kNet][ppn == 1 ? kTreeAlgo : a][p];
  double latency = kBaseLatency[a][p];
  if (a == kRingAlgo) {
    const int link = s.nnodes == 1 ? intraLink : kNet;
    if (func == TunedFunc::kBroadcast || func == TunedFunc::kReduce) {
      latency +=
          graph.sameChannels ? kLinkLatency[link][a][p] : nsteps * kLinkLatency[link][p == kSimple ? kTreeAlgo : a][p];
    } else {
      // Every step between nodes waits for the network; the others at least for posting to it.
      const double netOverhead = s.nnodes > 1 ? (s.amdCpu ? 2.0 : 1.0) * (p == kSimple ? 3 : 1) : 0.0;
      intraLat = std::max(intraLat, netOverhead);
      const int interSteps = s.nnodes == 1 ? 0 : func == TunedFunc::kAllReduce ? 2 * (s.nnodes - 1) : s.nnodes - 1;
      latency += (nsteps - interSteps) * intraLat + interSteps * interLat;
    }
  } else if (func == TunedFunc::kAllReduce) {
    latency += 2 * ((s.nranks / s.nnodes - 1) * intraLat + log2Floor(static_cast<size_t>(s.nnodes)) * interLat);
  }
  return {latency, busBw};
}

TunedChoice chooseLikeNccl(TunedFunc func, size_t bytes, const TunerSystem& s, Algorithm algorithm, Protocol protocol) {
  TunedChoice best;
  double bestTime = -1;
  for (Algorithm a : {Algorithm::kTree, Algorithm::kRing, Algorithm::kPat}) {
    if (algorithm != Algorithm::kAuto && a != algorithm) continue;
    for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      if (protocol != Protocol::kAuto && p != protocol) continue;
      const TunerCost cost = ncclCost(func, a, p, s);
      if (cost.bandwidth <= 0) continue;
      double bw = cost.bandwidth, latency = cost.latencyUs;
      const int logSize = log2Floor(bytes >> 6);
      if (a == Algorithm::kTree && func == TunedFunc::kAllReduce && logSize < 23) {
        bw *= kTreeCorrection[protoIndex(p)][logSize];
      }
      if (a == Algorithm::kRing && p == Protocol::kSimple && s.nnodes > 1 && func == TunedFunc::kAllReduce &&
          bytes / (static_cast<size_t>(s.collChannels) * s.nranks) >= 64) {
        latency *= s.computeCapability < 80 ? 1.9 : 1.4;  // the ring's plateau
      }
      const double time = latency + static_cast<double>(bytes) / (1000 * bw);
      if (bestTime < 0 || time < bestTime) {
        bestTime = time;
        best.algorithm = a;
        best.protocol = p;
      }
    }
  }
  if (bestTime < 0) {  // nothing allowed runs: NCCL fails the call; the engine keeps the ring
    best.algorithm = Algorithm::kRing;
    best.protocol = protocol == Protocol::kAuto ? Protocol::kSimple : protocol;
  }
  int channels = std::max(1, s.collChannels);
  if (best.algorithm == Algorithm::kPat) {
    // PAT keeps every channel NCCL has (it asks for no thread count); NCCL's scheduler then spreads
    // the op's traffic (the whole buffer) over them, each taking at least 32 KiB / channels.
    constexpr size_t kMinTraffic = 32 << 10;
    if (bytes < kMinTraffic) {
      const size_t perChannel = (kMinTraffic / channels + 15) / 16 * 16;
      channels = std::max(1, static_cast<int>(std::min<size_t>(channels, (bytes + perChannel - 1) / perChannel)));
    }
    best.channels = channels;
    return best;
  }
  // Fewer channels while each thread would get less than its share of the bytes.
  const int threads = maxThreads(best.algorithm, best.protocol, s);
  size_t perThread = best.protocol == Protocol::kSimple ? 64 : 8;
  if (best.algorithm == Algorithm::kRing && best.protocol == Protocol::kLL) perThread *= static_cast<size_t>(s.nranks);
  while (channels >= 2 && bytes < static_cast<size_t>(channels) * threads * perThread) --channels;
  best.channels = channels;
  return best;
}

Result<TunerSystem> tunerSystemFromNcclLog(const std::string& path, int nranks, int nnodes) {
  std::ifstream in(path);
  if (!in) return NS_ERROR(Code::kInvalidArgument, "{}: cannot open the NCCL log", path);
  TunerSystem s = TunerSystem::forLayout(nranks, nnodes);
  const std::regex pattern(R"(Pattern (\d+), crossNic \d+, nChannels (\d+), (?:bw|speed) ([0-9.]+)/([0-9.]+), )"
                           R"(type ([A-Z0-9]+)/([A-Z0-9]+), sameChannels (\d))");
  const std::regex coll(R"((\d+) coll channels)");
  const std::regex cpu(R"(CPU/[0-9a-fA-F-]+ \((\d+)/(\d+)/)");
  bool ring = false, tree = false, channels = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::smatch m;
    if (std::regex_search(line, m, pattern)) {
      const int kind = std::stoi(m[1]);
      if ((kind == 4 && ring) || (kind >= 1 && kind <= 3 && tree) || kind < 1 || kind > 4) continue;
      TunerGraph g;
      g.pattern = kind;
      g.channels = std::stoi(m[2]);
      g.bwIntra = std::stod(m[3]);
      g.bwInter = std::stod(m[4]);
      const std::string intra = m[5], inter = m[6];
      g.nvlinkIntra = intra == "NVL" || intra == "NVB" || intra == "LOC";
      g.ll128Paths = g.nvlinkIntra && (inter == "LOC" || inter == "NVL" || inter == "NVB" || inter == "C2C" ||
                                       inter == "PIX" || inter == "PXB" || inter == "P2C" || inter == "PXN");
      g.sameChannels = m[7] == "1";
      if (g.channels < 1 || !(g.bwIntra > 0) || !(g.bwInter > 0)) {
        return NS_ERROR(Code::kInvalidArgument, "{}:{}: graph line with no channels or bandwidth: {}", path, number,
                        line);
      }
      (kind == 4 ? s.ring : s.tree) = g;
      (kind == 4 ? ring : tree) = true;
    } else if (!channels && std::regex_search(line, m, coll)) {
      s.collChannels = std::max(1, std::stoi(m[1]));
      channels = true;
    } else if (std::regex_search(line, m, cpu)) {
      s.amdCpu = m[2] == "2";
    }
  }
  if (!ring || !tree) {
    return NS_ERROR(Code::kInvalidArgument,
                    "{}: no {} graph line ('Pattern N, ..., bw X/Y, type A/B'): the log "
                    "must come from NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH",
                    path, ring ? "tree" : "ring");
  }
  return s;
}

}  // namespace nshim
