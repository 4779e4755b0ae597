// Reading the version-2 lines with NCCL's decisions (FORMAT.md `nccl_task`, `nccl_proxy`) into
// TaskRecord / ProxyRecord, every field range-checked like the other lines.
#include "trace/reader_fields.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
using namespace reader_detail;

Status TraceParser::parseTask() {
  TaskEntry entry;
  entry.line = file_.lines;
  TaskRecord& r = entry.record = makeTaskRecord(TaskKind::kColl);
  std::string_view name;
  NS_RETURN_IF_ERROR(getUint64(object_, "n", &entry.n));
  NS_RETURN_IF_ERROR(getStringView(object_, "task", &name));
  if (!parseTaskKindName(name, &r.kind)) return badName("task", name);
  NS_RETURN_IF_ERROR(getHex64(object_, "comm", &r.commId));
  NS_RETURN_IF_ERROR(getUint64(object_, "seq", &r.seq));
  NS_RETURN_IF_ERROR(getInto(object_, "flags", 0, UINT32_MAX, &r.flags));
  NS_RETURN_IF_ERROR(getHex64(object_, "nccl_comm", &r.ncclCommHash));
  NS_RETURN_IF_ERROR(getUint64(object_, "nccl_seq", &r.ncclSeq));
  NS_RETURN_IF_ERROR(getInto(object_, "rank", -1, kI32Max, &r.rank));
  NS_RETURN_IF_ERROR(getInto(object_, "nranks", 0, kI32Max, &r.nranks));
  NS_RETURN_IF_ERROR(getInto(object_, "nnodes", 0, kI32Max, &r.nnodes));
  NS_RETURN_IF_ERROR(getFixedString(object_, "func", r.func, sizeof(r.func)));
  NS_RETURN_IF_ERROR(getUint64(object_, "count", &r.count));
  NS_RETURN_IF_ERROR(getStringView(object_, "dtype", &name));
  // NCCL names no type for some tasks (its table lacks uint8): written "unknown", kept as none.
  if (name != "unknown" && !parseDatatypeName(name, &r.datatype)) return badName("dtype", name);
  const char* placeKey = r.kind == TaskKind::kP2p ? "peer" : "root";
  NS_RETURN_IF_ERROR(getInto(object_, placeKey, -1, kI32Max, &r.rootOrPeer));
  NS_RETURN_IF_ERROR(getFixedString(object_, "algo", r.algo, sizeof(r.algo)));
  NS_RETURN_IF_ERROR(getFixedString(object_, "proto", r.proto, sizeof(r.proto)));
  NS_RETURN_IF_ERROR(getInto(object_, "channels", 0, UINT8_MAX, &r.nChannels));
  NS_RETURN_IF_ERROR(getInto(object_, "warps", 0, UINT8_MAX, &r.nWarps, true));
  NS_RETURN_IF_ERROR(getInto(object_, "t_start_ns", INT64_MIN, INT64_MAX, &r.startNs));
  NS_RETURN_IF_ERROR(getInto(object_, "t_end_ns", INT64_MIN, INT64_MAX, &r.endNs));
  file_.tasks.push_back(entry);
  return Status::Ok();
}

Status TraceParser::parseProxy() {
  ProxyEntry entry;
  entry.line = file_.lines;
  ProxyRecord& r = entry.record = makeProxyRecord();
  std::string_view dir;
  NS_RETURN_IF_ERROR(getUint64(object_, "n", &entry.n));
  NS_RETURN_IF_ERROR(getHex64(object_, "comm", &r.commId));
  NS_RETURN_IF_ERROR(getUint64(object_, "seq", &r.seq));
  NS_RETURN_IF_ERROR(getInto(object_, "flags", 0, UINT32_MAX, &r.flags));
  NS_RETURN_IF_ERROR(getHex64(object_, "nccl_comm", &r.ncclCommHash));
  NS_RETURN_IF_ERROR(getInto(object_, "rank", -1, kI32Max, &r.rank));
  NS_RETURN_IF_ERROR(getFixedString(object_, "func", r.func, sizeof(r.func)));
  NS_RETURN_IF_ERROR(getStringView(object_, "dir", &dir));
  if (dir != "send" && dir != "recv") return badName("dir", dir);
  r.isSend = dir == "send" ? 1 : 0;
  NS_RETURN_IF_ERROR(getInto(object_, "channel", 0, kI32Max, &r.channel));
  NS_RETURN_IF_ERROR(getInto(object_, "peer", -1, kI32Max, &r.peer));
  NS_RETURN_IF_ERROR(getInto(object_, "steps", kI32Min, kI32Max, &r.nSteps));
  NS_RETURN_IF_ERROR(getInto(object_, "chunk_size", kI32Min, kI32Max, &r.chunkSize));
  NS_RETURN_IF_ERROR(getInto(object_, "steps_done", 0, kI32Max, &r.stepsDone));
  NS_RETURN_IF_ERROR(getUint64(object_, "bytes", &r.bytes));
  NS_RETURN_IF_ERROR(getInto(object_, "t_start_ns", INT64_MIN, INT64_MAX, &r.startNs));
  NS_RETURN_IF_ERROR(getInto(object_, "t_end_ns", INT64_MIN, INT64_MAX, &r.endNs));
  file_.proxies.push_back(entry);
  return Status::Ok();
}

}  // namespace nshim::trace
