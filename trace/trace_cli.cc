// ncclshim-trace: reads ncclshim trace files (one file or a directory of per-rank files) and
//   dump [--format jsonl|csv] [--comms] <path>   re-emits the records (normalised JSON Lines, or a
//                                                CSV table of ops, or of communicator events)
//   validate <path>                              checks each file and the ranks against each other
// Exit status: 0 ok, 1 validation errors, 2 unreadable input or bad usage, 70 internal error (fence).
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/main_fence.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"

namespace nshim::trace {
namespace {

constexpr const char* kUsage =
    "usage: ncclshim-trace dump [--format jsonl|csv] [--comms] <trace file | trace dir>\n"
    "       ncclshim-trace validate <trace file | trace dir>\n";

void writeLine(const char* line, size_t length) {
  if (length > 0) std::fwrite(line, 1, length, stdout);
}

// Records of one file in recording order (by order number n).
void dumpJsonl(const TraceFile& file) {
  char line[kFormatLineBytes];
  writeLine(line, formatHeaderLine(file.header, line, sizeof(line)));
  size_t c = 0, o = 0;
  while (c < file.comms.size() || o < file.ops.size()) {
    bool takeComm = o == file.ops.size() || (c < file.comms.size() && file.comms[c].n < file.ops[o].n);
    if (takeComm) {
      writeLine(line, formatCommLine(file.comms[c].record, file.comms[c].n, line, sizeof(line)));
      ++c;
    } else {
      writeLine(line, formatOpLine(file.ops[o].record, file.ops[o].n, line, sizeof(line)));
      ++o;
    }
  }
  if (file.hasFooter) writeLine(line, formatFooterLine(file.footer, line, sizeof(line)));
}

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

void dumpCsvOps(const TraceSet& set) {
  std::printf(
      "global_rank,n,comm,rank,seq,op,count,dtype,redop,root,peer,nranks,bytes,stream,group,"
      "t_start_ns,t_end_ns,gpu_start_ns,gpu_end_ns,flags,result\n");
  for (const TraceFile& file : set.files) {
    int32_t globalRank = file.globalRank();
    for (const OpEntry& e : file.ops) {
      const OpRecord& r = e.record;
      std::string row =
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},0x{:016x},{},{},{},{},{},{},{}\n", globalRank, e.n,
                      commIdText(r.commId), r.rank, r.seq, opName(r.op), r.count, datatypeName(r.datatype),
                      redopName(r.redop, (r.flags & kOpFlagPreMulSum) != 0), r.root, r.peer, r.nranks, r.bytes,
                      r.stream, r.groupDepth, r.hostStartNs, r.hostEndNs, r.gpuStartNs, r.gpuEndNs, r.flags, r.result);
      std::fputs(row.c_str(), stdout);
    }
  }
}

void dumpCsvComms(const TraceSet& set) {
  std::printf("global_rank,n,event,comm,parent,split_seq,color,key,nranks,rank,host,pid,device,t_ns\n");
  for (const TraceFile& file : set.files) {
    for (const CommEntry& e : file.comms) {
      const CommRecord& r = e.record;
      std::string row =
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.globalRank, e.n, commEventName(r.event),
                      commIdText(r.commId), commIdText(r.parentId), r.splitSeq, r.color, r.key, r.nranks, r.rank,
                      csvField(r.host), r.pid, r.cudaDevice, r.timestampNs);
      std::fputs(row.c_str(), stdout);
    }
  }
}

int runDump(const std::vector<std::string>& args) {
  std::string format = "jsonl", path;
  bool comms = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format" && i + 1 < args.size()) {
      format = args[++i];
    } else if (args[i] == "--comms") {
      comms = true;
    } else if (path.empty() && !args[i].empty() && args[i][0] != '-') {
      path = args[i];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (path.empty() || (format != "jsonl" && format != "csv")) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  auto set = readTracePath(path);
  if (!set.ok()) {
    std::fprintf(stderr, "ncclshim-trace: %s\n", set.status().message().c_str());
    return 2;
  }
  if (format == "csv") {
    if (comms) dumpCsvComms(*set);
    else dumpCsvOps(*set);
  } else {
    for (const TraceFile& file : set->files) dumpJsonl(file);
  }
  for (const TraceFile& file : set->files) {
    if (file.truncated)
      std::fprintf(stderr, "ncclshim-trace: %s: %s\n", file.path.c_str(), file.endDescription().c_str());
  }
  return 0;
}

int runValidate(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  auto set = readTracePath(args[0]);
  if (!set.ok()) {
    std::fprintf(stderr, "ncclshim-trace: %s\n", set.status().message().c_str());
    return 2;
  }
  for (const TraceFile& file : set->files) {
    std::printf("%s: global rank %d, %zu comm events, %zu ops, %llu dropped, %s\n", file.path.c_str(),
                file.globalRank(), file.comms.size(), file.ops.size(), static_cast<unsigned long long>(file.dropped),
                file.endDescription().c_str());
  }
  ValidationReport report = validateTraceSet(*set);
  for (const std::string& e : report.errors) std::printf("error: %s\n", e.c_str());
  for (const std::string& w : report.warnings) std::printf("warning: %s\n", w.c_str());
  for (const ValidationReport::NotShown& more : report.notShown) {
    std::printf("... and %zu more %s of this kind: %s (the first %zu are shown)\n", more.count,
                more.error ? "errors" : "warnings", more.kind.c_str(), kMessagesShownPerKind);
  }
  std::printf("%s: %zu files, %zu errors, %zu warnings\n", report.ok() ? "valid" : "INVALID", set->files.size(),
              report.errorCount, report.warningCount);
  return report.ok() ? 0 : 1;
}

}  // namespace
}  // namespace nshim::trace

int main(int argc, char** argv) {
  return nshim::runFenced("ncclshim-trace", [&] {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
      std::fputs(nshim::trace::kUsage, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    std::string command = args[0];
    args.erase(args.begin());
    if (command == "dump") return nshim::trace::runDump(args);
    if (command == "validate") return nshim::trace::runValidate(args);
    std::fputs(nshim::trace::kUsage, stderr);
    return 2;
  });
}
