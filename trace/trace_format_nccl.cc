// Formatting of the version-2 lines that carry NCCL's own decisions, as its profiler plugin reports
// them (FORMAT.md `nccl_task`, `nccl_proxy`): the algorithm, protocol and channels of each task
// of a call, and what each network proxy operation moved. Key order and spelling are the schema.
#include "trace/line_buffer.h"
#include "trace/trace_format.h"

namespace nshim::trace {

const char* taskKindName(TaskKind kind) { return kind == TaskKind::kP2p ? "p2p" : "coll"; }

bool parseTaskKindName(std::string_view name, TaskKind* out) {
  if (name == "coll") {
    *out = TaskKind::kColl;
  } else if (name == "p2p") {
    *out = TaskKind::kP2p;
  } else {
    return false;
  }
  return true;
}

size_t formatTaskLine(const TaskRecord& r, uint64_t n, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  const bool p2p = r.kind == TaskKind::kP2p;
  line.put('{');
  line.key("type");
  line.put("\"nccl_task\"");
  line.key("n");
  line.putUint(n);
  line.key("task");
  line.put('"');
  line.put(taskKindName(r.kind));
  line.put('"');
  line.key("comm");
  line.put('"');
  line.putHex64(r.commId);
  line.put('"');
  line.key("seq");
  line.putUint(r.seq);
  line.key("flags");
  line.putUint(r.flags);
  line.key("nccl_comm");
  line.put('"');
  line.putHex64(r.ncclCommHash);
  line.put('"');
  line.key("nccl_seq");
  line.putUint(r.ncclSeq);
  line.key("rank");
  line.putInt(r.rank);
  line.key("nranks");
  line.putInt(r.nranks);
  line.key("nnodes");
  line.putInt(r.nnodes);
  line.key("func");
  line.putJsonString(r.func, sizeof(r.func));
  line.key("count");
  line.putUint(r.count);
  line.key("dtype");
  line.put('"');
  line.put(datatypeName(r.datatype));
  line.put('"');
  line.key("root");
  line.putInt(p2p ? kNoRank : r.rootOrPeer);
  line.key("peer");
  line.putInt(p2p ? r.rootOrPeer : kNoRank);
  line.key("algo");
  line.putJsonString(r.algo, sizeof(r.algo));
  line.key("proto");
  line.putJsonString(r.proto, sizeof(r.proto));
  line.key("channels");
  line.putUint(r.nChannels);
  line.key("warps");
  line.putUint(r.nWarps);
  line.key("t_start_ns");
  line.putInt(r.startNs);
  line.key("t_end_ns");
  line.putInt(r.endNs);
  line.put('}');
  line.put('\n');
  return line.overflow() ? 0 : line.size();
}

size_t formatProxyLine(const ProxyRecord& r, uint64_t n, char* out, size_t capacity) {
  LineBuffer line(out, capacity);
  line.put('{');
  line.key("type");
  line.put("\"nccl_proxy\"");
  line.key("n");
  line.putUint(n);
  line.key("comm");
  line.put('"');
  line.putHex64(r.commId);
  line.put('"');
  line.key("seq");
  line.putUint(r.seq);
  line.key("flags");
  line.putUint(r.flags);
  line.key("nccl_comm");
  line.put('"');
  line.putHex64(r.ncclCommHash);
  line.put('"');
  line.key("rank");
  line.putInt(r.rank);
  line.key("func");
  line.putJsonString(r.func, sizeof(r.func));
  line.key("dir");
  line.put(r.isSend ? "\"send\"" : "\"recv\"");
  line.key("channel");
  line.putInt(r.channel);
  line.key("peer");
  line.putInt(r.peer);
  line.key("steps");
  line.putInt(r.nSteps);
  line.key("chunk_size");
  line.putInt(r.chunkSize);
  line.key("steps_done");
  line.putInt(r.stepsDone);
  line.key("bytes");
  line.putUint(r.bytes);
  line.key("t_start_ns");
  line.putInt(r.startNs);
  line.key("t_end_ns");
  line.putInt(r.endNs);
  line.put('}');
  line.put('\n');
  return line.overflow() ? 0 : line.size();
}

}  // namespace nshim::trace
