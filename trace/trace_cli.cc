// ncclshim-trace: reads ncclshim trace files (one file or a directory of per-rank files) and
//   dump [--format jsonl|csv] [--comms] <path>   re-emits the records (normalised JSON Lines, or a
//                                                CSV table of ops, or of communicator events)
//   validate <path>                              checks each file and the ranks against each other
// Its command line: common/command_line.h (CLI11), with a generated --help for each subcommand.
// Exit status: 0 ok, 1 validation errors, 2 unreadable input or bad usage, 70 internal error (fence).
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/command_line.h"
#include "common/main_fence.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"

namespace nshim::trace {
namespace {

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

struct DumpArgs {
  std::string format = "jsonl";
  bool comms = false;
  std::string path;
};

int runDump(const DumpArgs& args) {
  const std::string& format = args.format;
  const std::string& path = args.path;
  const bool comms = args.comms;
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

int runValidate(const std::string& path) {
  auto set = readTracePath(path);
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

// The command and its two subcommands (common/command_line.h), storing into *dump and *validatePath.
void buildCommand(CLI::App& app, DumpArgs* dump, std::string* validatePath) {
  describeCommand(app, "dump|validate [options] <trace file | trace dir>",
                  "Reads ncclshim trace files (one file or a directory of per-rank files).",
                  "exit status: 0 ok, 1 validation errors, 2 unreadable input or bad usage.");
  app.require_subcommand(1, 1);
  CLI::App* dumpCommand = app.add_subcommand("dump")->group("commands");
  describeCommand(*dumpCommand, "[--format jsonl|csv] [--comms] <trace file | trace dir>",
                  "Re-emits the records: normalised JSON Lines, or a CSV table of ops, or of communicator events.");
  addValueOption(
      *dumpCommand, "--format", "jsonl|csv",
      [dump](const std::string& value) {
        if (value != "jsonl" && value != "csv") refuseValue(fmt::format("--format: '{}' is not jsonl or csv", value));
        dump->format = value;
      },
      "output format (default jsonl)");
  dumpCommand->add_flag("--comms", dump->comms, "with --format csv: the communicator events instead of the ops");
  dumpCommand->add_option("trace", dump->path, "the trace")->required();
  CLI::App* validateCommand = app.add_subcommand("validate")->group("commands");
  describeCommand(*validateCommand, "<trace file | trace dir>", "Checks each file and the ranks against each other.");
  validateCommand->add_option("trace", *validatePath, "the trace")->required();
}

}  // namespace
}  // namespace nshim::trace

int main(int argc, char** argv) {
  return nshim::runFenced("ncclshim-trace", [&] {
    nshim::trace::DumpArgs dump;
    std::string validatePath;
    CLI::App app("", "ncclshim-trace");
    nshim::trace::buildCommand(app, &dump, &validatePath);
    if (argc < 2) {
      nshim::printHelpText(nshim::commandHelp(app), stderr);
      return 2;
    }
    if (std::string(argv[1]) == "help") argv[1] = const_cast<char*>("--help");
    return nshim::runCommand(app, argc - 1, argv + 1, [&]() -> nshim::Result<int> {
      return app.got_subcommand("dump") ? nshim::trace::runDump(dump) : nshim::trace::runValidate(validatePath);
    });
  });
}
