// DecisionMix from a trace's nccl_task / nccl_proxy lines, joined to their op lines by
// (communicator, sequence number) within each rank's file.
#include "tools/inspect/decision_mix.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "workload/size_bucket.h"

namespace nshim::tools {
namespace {

using Key = std::tuple<std::string, uint64_t, std::string, std::string>;  // op, bucket, algo, proto

}  // namespace

Result<DecisionMix> decisionMixOfTrace(const std::string& path) {
  NS_ASSIGN_OR_RETURN(trace::TraceSet set, trace::readTracePath(path));
  return decisionMixOfSet(set);
}

DecisionMix decisionMixOfSet(const trace::TraceSet& set) {
  DecisionMix mix;
  std::map<Key, DecisionRow> rows;
  for (const trace::TraceFile& file : set.files) {
    if (file.tasks.empty() && file.proxies.empty()) continue;  // a version-1 file, or the plugin was off
    std::map<std::pair<uint64_t, uint64_t>, const trace::OpRecord*> ops;
    for (const trace::OpEntry& op : file.ops) ops[{op.record.commId, op.record.seq}] = &op.record;
    std::map<std::pair<uint64_t, uint64_t>, DecisionRow*> rowOfCall;
    for (const trace::TaskEntry& entry : file.tasks) {
      const trace::TaskRecord& t = entry.record;
      ++mix.tasks;
      auto op = ops.find({t.commId, t.seq});
      if (!(t.flags & trace::kTaskJoined) || op == ops.end()) {
        ++mix.unjoined;
        continue;
      }
      const bool p2p = t.kind == trace::TaskKind::kP2p;
      Key key{trace::opName(op->second->op), workload::sizeBucket(op->second->bytes), p2p ? "p2p" : t.algo,
              p2p ? "-" : t.proto};
      DecisionRow& row = rows[key];
      if (row.tasks == 0) {
        std::tie(row.op, row.bucket, row.algo, row.proto) = key;
        row.minChannels = row.maxChannels = t.nChannels;
      }
      ++row.tasks;
      row.minChannels = std::min<int>(row.minChannels, t.nChannels);
      row.maxChannels = std::max<int>(row.maxChannels, t.nChannels);
      auto [it, first] = rowOfCall.insert({{t.commId, t.seq}, &row});
      if (first) ++row.calls;
    }
    for (const trace::ProxyEntry& entry : file.proxies) {
      const trace::ProxyRecord& p = entry.record;
      ++mix.proxies;
      auto call = rowOfCall.find({p.commId, p.seq});
      if (!(p.flags & trace::kTaskJoined) || call == rowOfCall.end()) {
        ++mix.unjoined;
        continue;
      }
      if (p.isSend) call->second->netSentBytes += p.bytes;
    }
  }
  for (auto& [key, row] : rows) mix.rows.push_back(row);
  return mix;
}

void printDecisionMixText(std::FILE* out, const DecisionMix& mix) {
  fmt::print(
      out, "#\n# NCCL's decisions (profiler plugin): {} tasks, {} network proxy operations, {} not joined to a call\n",
      mix.tasks, mix.proxies, mix.unjoined);
  fmt::print(out, "  {:<13} {:>7}  {:<14} {:<7} {:>9} {:>9} {:>9} {:>16}\n", "op", "size<=", "algo", "proto", "calls",
             "tasks", "channels", "net_sent_bytes");
  for (const DecisionRow& r : mix.rows) {
    std::string channels = r.minChannels == r.maxChannels ? std::to_string(r.minChannels)
                                                          : fmt::format("{}-{}", r.minChannels, r.maxChannels);
    fmt::print(out, "  {:<13} {:>7}  {:<14} {:<7} {:>9} {:>9} {:>9} {:>16}\n", r.op, workload::bucketName(r.bucket),
               r.algo, r.proto, r.calls, r.tasks, channels, r.netSentBytes);
  }
}

void printDecisionMixCsv(std::FILE* out, const DecisionMix& mix) {
  fmt::print(out, "op,size_bucket,size_name,algo,proto,calls,tasks,min_channels,max_channels,net_sent_bytes\n");
  for (const DecisionRow& r : mix.rows) {
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{}\n", r.op, r.bucket, workload::bucketName(r.bucket), r.algo, r.proto,
               r.calls, r.tasks, r.minChannels, r.maxChannels, r.netSentBytes);
  }
}

}  // namespace nshim::tools
