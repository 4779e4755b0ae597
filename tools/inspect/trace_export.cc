// Chrome trace JSON and per-op CSV export of a raw trace (layout in trace_export.h).
#include "tools/inspect/trace_export.h"

#include <algorithm>
#include <limits>

#include "tools/inspect/output_file.h"
#include "trace/trace_format.h"
#include "trace/trace_validate.h"
#include "workload/rank_layout.h"

namespace nshim::tools {
namespace {

bool isGroupCall(const trace::OpRecord& r) {
  return r.op == trace::OpCode::kGroupStart || r.op == trace::OpCode::kGroupEnd;
}

bool gpuTimed(const trace::OpRecord& r) {
  return (r.flags & trace::kOpFlagGpuTimed) && r.gpuStartNs > 0 && r.gpuEndNs >= r.gpuStartNs;
}

int64_t startNs(const trace::OpRecord& r) { return gpuTimed(r) ? r.gpuStartNs : r.hostStartNs; }
int64_t durationNs(const trace::OpRecord& r) {
  int64_t d = gpuTimed(r) ? r.gpuEndNs - r.gpuStartNs : r.hostEndNs - r.hostStartNs;
  return std::max<int64_t>(d, 0);
}

std::string usText(int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

int commRank(const workload::CommGroup* comm, int global) {
  if (!comm) return -1;
  auto it = std::find(comm->members.begin(), comm->members.end(), global);
  return it == comm->members.end() ? -1 : static_cast<int>(it - comm->members.begin());
}

}  // namespace

size_t writeChromeTrace(FILE* out, const TraceView& view) {
  int64_t base = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < view.set.files.size(); ++i) {
    for (const trace::OpEntry& e : view.set.files[i].ops) base = std::min(base, view.wallNs(i, startNs(e.record)));
  }
  fmt::print(out,
             "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"generator\":\"ncclshim convert --to chrome\","
             "\"ranks\":{},\"communicators\":{}}},\n\"traceEvents\":[",
             view.worldSize, view.comms.size());
  const char* sep = "\n";
  for (size_t i = 0; i < view.set.files.size(); ++i) {
    const trace::TraceFile& f = view.set.files[i];
    const int pid = view.fileRank[i];
    fmt::print(out, "{}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}", sep,
               pid, jsonString(fmt::format("rank {} ({}, pid {})", pid, f.header.host, f.header.pid)));
    sep = ",\n";
    fmt::print(out,
               "{}{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{"
               "\"sort_index\":{}}}}}",
               sep, pid, pid);
    fmt::print(out,
               "{}{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":"
               "\"group calls\"}}}}",
               sep, pid);
    for (size_t c = 0; c < view.comms.size(); ++c) {
      const workload::CommGroup& comm = view.comms[c];
      if (commRank(&comm, pid) < 0) continue;
      fmt::print(
          out, "{}{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", sep, pid,
          c + 1,
          jsonString(fmt::format("{} {} ({} ranks)", comm.label, trace::commIdText(comm.id), comm.members.size())));
    }
  }
  size_t events = 0;
  for (size_t i = 0; i < view.set.files.size(); ++i) {
    const trace::TraceFile& f = view.set.files[i];
    const int pid = view.fileRank[i];
    const std::string file(workload::baseName(f.path));
    for (const trace::OpEntry* e : opsInOrder(f)) {
      const trace::OpRecord& r = e->record;
      auto it = view.commIndex.find(r.commId);
      const size_t tid = isGroupCall(r) || it == view.commIndex.end() ? 0 : it->second + 1;
      const workload::CommGroup* comm = tid ? &view.comms[it->second] : nullptr;
      const char* cat = isGroupCall(r)                                                 ? "group"
                        : r.op == trace::OpCode::kSend || r.op == trace::OpCode::kRecv ? "p2p"
                                                                                       : "collective";
      fmt::print(
          out,
          "{}{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"comm\":\"{}\",\"group\":{},\"rank\":{},\"nranks\":{},\"seq\":{},\"count\":{},"
          "\"dtype\":\"{}\",\"redop\":\"{}\",\"root\":{},\"peer\":{},\"bytes\":{},\"stream\":\"{}\","
          "\"group_depth\":{},\"flags\":{},\"result\":{},\"gpu_timed\":{},\"t_start_ns\":{},\"t_end_ns\":{},"
          "\"gpu_start_ns\":{},\"gpu_end_ns\":{},\"n\":{},\"source\":{}}}}}",
          sep, trace::opName(r.op), cat, pid, tid, usText(view.wallNs(i, startNs(r)) - base), usText(durationNs(r)),
          trace::commIdText(r.commId), jsonString(comm ? comm->label : ""), r.rank, r.nranks, r.seq, r.count,
          trace::datatypeName(r.datatype), trace::redopName(r.redop, (r.flags & trace::kOpFlagPreMulSum) != 0), r.root,
          r.peer, r.bytes, trace::commIdText(r.stream), r.groupDepth, r.flags, r.result, gpuTimed(r) ? "true" : "false",
          r.hostStartNs, r.hostEndNs, r.gpuStartNs, r.gpuEndNs, e->n, jsonString(fmt::format("{}:{}", file, e->line)));
      sep = ",\n";
      ++events;
    }
  }
  fmt::print(out, "\n]}}\n");
  return events;
}

size_t writeOpCsv(FILE* out, const TraceView& view) {
  fmt::print(out,
             "global_rank,file,line,n,comm,group,comm_rank,nranks,seq,op,count,dtype,redop,root,peer,bytes,"
             "stream,group_depth,t_start_ns,t_end_ns,gpu_start_ns,gpu_end_ns,duration_ns,flags,result\n");
  size_t rows = 0;
  for (size_t i = 0; i < view.set.files.size(); ++i) {
    const trace::TraceFile& f = view.set.files[i];
    const std::string file(workload::baseName(f.path));
    for (const trace::OpEntry* e : opsInOrder(f)) {
      const trace::OpRecord& r = e->record;
      const workload::CommGroup* comm = isGroupCall(r) ? nullptr : view.findComm(r.commId);
      fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", view.fileRank[i],
                 csvField(file), e->line, e->n, trace::commIdText(r.commId), csvField(comm ? comm->label : ""), r.rank,
                 r.nranks, r.seq, trace::opName(r.op), r.count, trace::datatypeName(r.datatype),
                 trace::redopName(r.redop, (r.flags & trace::kOpFlagPreMulSum) != 0), r.root, r.peer, r.bytes,
                 trace::commIdText(r.stream), r.groupDepth, r.hostStartNs, r.hostEndNs, r.gpuStartNs, r.gpuEndNs,
                 durationNs(r), r.flags, r.result);
      ++rows;
    }
  }
  return rows;
}

}  // namespace nshim::tools
