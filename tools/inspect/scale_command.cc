// `ncclshim scale <trace> --dp N [--ep M] -o DIR`: a captured job written at another data-parallel
// and / or expert-parallel size (the rules: workload/dp_scale.h, docs/scale.md), one trace file per
// rank of the new job, each created new and private in DIR. Prints the captured and the new shape
// and what the rules decided.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/command_line.h"
#include "common/private_file.h"
#include "tools/inspect/commands.h"
#include "tools/inspect/input_command_line.h"
#include "tools/inspect/job_shape_lines.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "workload/dp_scale.h"

namespace nshim::tools {
namespace {

const char* kScaleDescription =
    R"(  Writes the captured job at data-parallel size N (larger or smaller): the job's tensor, data and
  pipeline groups are recovered from its communicators' members; every new data-parallel replica
  does what a captured replica did; data-parallel allreduces keep their buffer, reduce-scatters and
  all-gathers of a sharded buffer divide it by N (padded as Megatron pads it). With --ep M, a
  mixture-of-experts job at expert-parallel size M (M | N): the token all-to-alls follow the experts'
  owners, the experts' gradient buffers are EP / M as large. Rules: docs/scale.md.
  One file per new rank, DIR/ncclshim-scaled-rank<R>.jsonl (DIR is created, 0700; it must hold no
  .jsonl file yet). Exit status: 0 written, 2 error (nothing is written when the rules refuse).)";

// A parallel size given on the command line: 1..2^20, else refused naming the option.
int parallelSize(const char* flag, const char* kind, const std::string& value) {
  int64_t number = 0;
  if (!parseCount(value, &number) || number < 1 || number > (1 << 20)) {
    refuseValue(fmt::format("{}: '{}' is not a {}-parallel size (1..1048576)", flag, value, kind));
  }
  return static_cast<int>(number);
}

struct ScaleArgs {
  std::string input;
  std::string output;
  int dp = 0;
  int cp = 0;  // the captured context-parallel size (0: recovered)
  InputOptions inputOptions;
};

void addOptions(CLI::App& app, ScaleArgs* a) {
  app.add_option("trace", a->input, "the captured trace");
  addValueOption(
      app, "--dp", "N", [a](const std::string& value) { a->dp = parallelSize("--dp", "data", value); },
      "the new data-parallel size (default: as captured; --dp or --ep is required)");
  addValueOption(
      app, "--cp", "N", [a](const std::string& value) { a->cp = parallelSize("--cp", "context", value); },
      "the captured context-parallel size, when the communicators leave it ambiguous\n"
      "(context-parallel groups keep their ops as they are)");
  addValueOption(
      app, "-o,--output", "DIR", [a](const std::string& value) { a->output = value; },
      "the directory of the new trace (required)");
  // --tp N, --pp N: the captured sizes, when ambiguous; --ep M: the new expert-parallel size.
  addInputOptions(app, &a->inputOptions);
  app.callback([a] {
    if (a->input.empty()) refuseValue("a trace to scale is needed");
    if (a->dp == 0 && a->inputOptions.ep == 0) refuseValue("--dp or --ep is required");
    if (a->output.empty()) refuseValue("-o DIR is required");
  });
}

// DIR created 0700, or an existing directory (not a symlink) holding no trace file yet.
Status prepareDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return Status();
  if (errno != EEXIST) return NS_ERROR(Code::kSystemError, "-o {}: cannot create it: {}", dir, std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NS_ERROR(Code::kInvalidArgument, "-o {}: exists and is not a directory (symlinks are not followed)", dir);
  }
  Result<trace::TraceSet> existing = trace::readTraceDir(dir, [] {
    trace::ReadOptions options;
    options.skipOps = true;
    return options;
  }());
  if (existing.ok() && !existing->files.empty()) {
    return NS_ERROR(Code::kInvalidArgument, "-o {}: already holds trace files ({}...); give an empty or new directory",
                    dir, existing->files.front().path);
  }
  return Status();
}

// `text` into a new private file `path`.
Status writeText(const std::string& path, const std::string& text) {
  char chosen[4096];
  int fd = createNewFile(path.c_str(), 0600, chosen, sizeof(chosen), false);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "{}: cannot create it: {}", path, std::strerror(-fd));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      return NS_ERROR(Code::kSystemError, "{}: write failed: {}", path, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return NS_ERROR(Code::kSystemError, "{}: close failed: {}", path, std::strerror(errno));
  return Status();
}

// Writes `file` as FORMAT.md lines into a new private file `path`.
Status writeTrace(const std::string& path, const trace::TraceFile& file) {
  std::string text;
  char line[trace::kFormatLineBytes];
  trace::TraceHeader header = file.header;  // the job's NCCL settings, as read, back into the header
  header.ncclEnvLeftOut =
      file.ncclEnvLeftOut + trace::encodeNcclEnv(file.ncclEnv, header.ncclEnv, sizeof(header.ncclEnv));
  text.append(line, trace::formatHeaderLine(header, line, sizeof(line)));
  size_t c = 0, o = 0, s = 0;
  while (c < file.comms.size() || o < file.ops.size() || s < file.steps.size()) {
    const uint64_t next = std::min(c < file.comms.size() ? file.comms[c].n : UINT64_MAX,
                                   o < file.ops.size() ? file.ops[o].n : UINT64_MAX);
    if (s < file.steps.size() && file.steps[s].n < next) {
      const trace::StepEntry& step = file.steps[s++];
      const trace::StepRecord record{trace::kTraceRecordAbi, 0, step.step, step.timestampNs};
      text.append(line, trace::formatStepLine(record, step.n, line, sizeof(line)));
    } else if (o == file.ops.size() || (c < file.comms.size() && file.comms[c].n < file.ops[o].n)) {
      text.append(line, trace::formatCommLine(file.comms[c].record, file.comms[c].n, line, sizeof(line)));
      ++c;
    } else {
      text.append(line, trace::formatOpLine(file.ops[o].record, file.ops[o].n, line, sizeof(line)));
      ++o;
    }
  }
  if (file.hasFooter) text.append(line, trace::formatFooterLine(file.footer, line, sizeof(line)));
  return writeText(path, text);
}

Status run(const ScaleArgs& a) {
  NS_ASSIGN_OR_RETURN(trace::TraceSet traces, trace::readTracePath(a.input));
  workload::ShapeOptions shapeOptions;
  shapeOptions.tp = a.inputOptions.tp;
  shapeOptions.pp = a.inputOptions.pp;
  shapeOptions.cp = a.cp;
  NS_ASSIGN_OR_RETURN(workload::JobShape shape, workload::recoverJobShape(traces, shapeOptions));
  NS_ASSIGN_OR_RETURN(workload::DataParallelScaler scaler,
                      workload::DataParallelScaler::create(traces, shape, a.dp, a.inputOptions.ep));
  NS_RETURN_IF_ERROR(prepareDirectory(a.output));
  const int world = scaler.to().world;
  std::fprintf(stderr, "ncclshim scale: %s -> %s\n", shape.toString().c_str(),
               workload::shapeText(scaler.to()).c_str());
  for (const std::string& note : scaler.notes()) std::fprintf(stderr, "ncclshim scale: note: %s\n", note.c_str());
  int lastShown = 0;
  for (int rank = 0; rank < world; ++rank) {
    NS_RETURN_IF_ERROR(writeTrace(fmt::format("{}/ncclshim-scaled-rank{}.jsonl", a.output, rank), scaler.rank(rank)));
    const int percent = static_cast<int>((rank + 1) * 100LL / world);
    if (world >= 256 && percent / 10 > lastShown / 10) {
      std::fprintf(stderr, "ncclshim scale: %d of %d ranks written\n", rank + 1, world);
      lastShown = percent;
    }
  }
  std::string origin = fmt::format("from: {}, {}\nto: {} by ncclshim scale{}{}\n", a.input, shape.toString(),
                                   workload::shapeText(scaler.to()), a.dp ? fmt::format(" --dp {}", a.dp) : "",
                                   a.inputOptions.ep ? fmt::format(" --ep {}", a.inputOptions.ep) : "");
  for (const std::string& note : scaler.notes()) origin += "note: " + note + "\n";
  NS_RETURN_IF_ERROR(writeText(fmt::format("{}/{}", a.output, kScaleOriginFile), origin));
  std::fprintf(stderr, "ncclshim scale: %d files in %s\n", world, a.output.c_str());
  return Status();
}

}  // namespace

int scaleMain(int argc, char** argv) {
  ScaleArgs args;
  CLI::App app("", "ncclshim scale");
  describeCommand(app, "<trace> [--dp N] [--ep M] -o DIR [--tp N] [--pp N] [--cp N]", kScaleDescription,
                  "--tp N, --pp N: the captured tensor / pipeline size, when the communicators leave it ambiguous.");
  addOptions(app, &args);
  return runCommand(app, argc, argv, exitZeroWhenOk([&args] { return run(args); }));
}

}  // namespace nshim::tools
