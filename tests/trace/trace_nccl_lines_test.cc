// Version 2 of the trace format: the nccl_task / nccl_proxy lines (NCCL's decisions from the profiler
// plugin) round-trip every field through the recorder and the reader, and are counted in the
// footer; tasks held for their call come out right before its op line; malformed ones name their
// field; version-1 files (the committed examples and an inline
// one) still read, and nccl_* lines inside a version-1 file are skipped as unknown.
#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/tsc_clock.h"
#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/recorder.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"

namespace nshim::trace {
namespace {

using testing::TempDir;

TaskRecord variedTask(uint64_t i) {
  TaskRecord r = makeTaskRecord(i % 2 ? TaskKind::kP2p : TaskKind::kColl);
  r.commId = 0x1234000000000000ull + i;
  r.seq = 7 * i;
  r.flags = (i % 3 == 0) ? 0 : kTaskJoined;
  r.ncclCommHash = ~r.commId;
  r.ncclSeq = i % 2 ? 0 : i / 2;
  r.count = (uint64_t(1) << 40) + i;
  r.startNs = 1000 + int64_t(i);
  r.endNs = 2000 + int64_t(i);
  r.rank = int32_t(i % 5);
  r.nranks = 5;
  r.nnodes = 3;
  r.rootOrPeer = int32_t(i % 6) - 1;
  r.datatype = i % 4 == 3 ? kNoDatatype : int32_t(i % kNumDatatypes);
  r.nChannels = uint8_t(i % 256);
  r.nWarps = uint8_t((i * 3) % 256);
  copyFixed(r.func, sizeof(r.func), i % 2 ? "Send" : "ReduceScatter");
  if (r.kind == TaskKind::kColl) {
    copyFixed(r.algo, sizeof(r.algo), i % 4 ? "RING" : "COLLNET_DIRECT");
    copyFixed(r.proto, sizeof(r.proto), i % 3 ? "LL128" : "SIMPLE");
  }
  return r;
}

ProxyRecord variedProxy(uint64_t i) {
  ProxyRecord r = makeProxyRecord();
  r.isSend = i % 2;
  r.commId = 0x9876000000000000ull + i;
  r.seq = 3 * i;
  r.flags = i % 4 ? kTaskJoined : 0;
  r.ncclCommHash = r.commId ^ 0xffff;
  r.bytes = (uint64_t(1) << 33) + 17 * i;
  r.startNs = -5 + int64_t(i);
  r.endNs = int64_t(i) * 1000;
  r.rank = int32_t(i % 7);
  r.peer = int32_t(i % 9) - 1;
  r.channel = int32_t(i % 64);
  r.nSteps = int32_t(i * 11);
  r.chunkSize = 524288;
  r.stepsDone = int32_t(i % 13);
  copyFixed(r.func, sizeof(r.func), i % 2 ? "AllGather" : "Recv");
  return r;
}

std::string withHeader(int version, const std::string& line) {
  return R"({"type":"header","format":"ncclshim-trace","version":)" + std::to_string(version) +
         R"(,"host":"h","pid":1})" + "\n" + line + "\n";
}

TEST_CASE("nccl_task and nccl_proxy lines round-trip every field", "[trace]") {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  Recorder recorder(config);
  constexpr int kCount = 40;
  for (int i = 0; i < kCount; ++i) {
    recorder.recordTask(variedTask(i));
    recorder.recordProxy(variedProxy(i));
  }
  REQUIRE(recorder.close().ok());
  CHECK(recorder.stats().tasks == kCount);
  CHECK(recorder.stats().proxies == kCount);
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  CHECK(file->header.version == kTraceFormatVersion);
  REQUIRE(file->tasks.size() == kCount);
  REQUIRE(file->proxies.size() == kCount);
  CHECK(file->footer.tasks == kCount);
  CHECK(file->footer.proxies == kCount);
  CHECK(file->footer.records == 2 * kCount);
  CHECK(file->ignoredLines == 0);
  for (int i = 0; i < kCount; ++i) {
    TaskRecord want = variedTask(i);
    const TaskRecord& got = file->tasks[i].record;
    INFO("task " << i << ": " << got.func << " " << got.algo << " " << got.proto);
    CHECK(got.kind == want.kind);
    CHECK(got.commId == want.commId);
    CHECK(got.rootOrPeer == want.rootOrPeer);
    CHECK(got.datatype == want.datatype);
    CHECK(std::memcmp(&got, &want, sizeof(want)) == 0);  // every other field and byte
    ProxyRecord wantProxy = variedProxy(i);
    const ProxyRecord& gotProxy = file->proxies[i].record;
    CHECK(gotProxy.bytes == wantProxy.bytes);
    CHECK(gotProxy.isSend == wantProxy.isSend);
    CHECK(std::memcmp(&gotProxy, &wantProxy, sizeof(wantProxy)) == 0);
  }
  // The general parser reads the same records (the op fast path does not apply to these lines).
  ReadOptions general;
  general.opFastPath = false;
  auto again = readTraceFile(recorder.path(), general);
  REQUIRE(again.ok());
  REQUIRE(again->tasks.size() == kCount);
  CHECK(std::memcmp(&again->tasks[5].record, &file->tasks[5].record, sizeof(TaskRecord)) == 0);
}

// What a file's lines are, in order numbers: 'o' an op (its seq), 't' a task (its seq), 'p' a proxy.
std::vector<std::pair<char, uint64_t>> linesInOrder(const TraceFile& file) {
  std::vector<std::pair<uint64_t, std::pair<char, uint64_t>>> all;
  for (const OpEntry& e : file.ops) all.push_back({e.n, {'o', e.record.seq}});
  for (const TaskEntry& e : file.tasks) all.push_back({e.n, {'t', e.record.seq}});
  for (const ProxyEntry& e : file.proxies) all.push_back({e.n, {'p', e.record.seq}});
  std::sort(all.begin(), all.end());
  std::vector<std::pair<char, uint64_t>> lines;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].first != i) return {};  // every order number once
    lines.push_back(all[i].second);
  }
  return lines;
}

// Every field but the times.
bool sameBesideTimes(TaskRecord got, TaskRecord want) {
  got.startNs = want.startNs;
  got.endNs = want.endNs;
  return std::memcmp(&got, &want, sizeof(want)) == 0;
}

TEST_CASE("tasks held in place for their call come out right before its op line with its times, through a small ring",
          "[trace]") {
  // A 16-record ring and a writer that drains only when woken: calls of 0 to 4 tasks fill it, so
  // some tasks find no room to be held and are written at once, which writes those held before.
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  config.ringRecords = 16;
  config.drainIntervalNs = 1'000'000'000;
  Recorder recorder(config);
  const int64_t testStart = tscNowNs();
  constexpr int kCalls = 300;
  struct Sent {
    TaskRecord want;
    bool held;
    bool writtenEarly;  // held, then written when a later task of its call could not be held
  };
  std::vector<Sent> sent;
  size_t heldCount = 0, notHeld = 0;
  for (int i = 0; i < kCalls; ++i) {
    const OpRecord op = testing::variedOp(0, uint64_t(i));
    const size_t first = sent.size();
    for (int k = 0; k < i % 5; ++k) {
      TaskRecord want = variedTask(uint64_t(5 * i + k));
      want.seq = uint64_t(i);  // the call it belongs to
      TaskRecord* slot = recorder.holdTask(op.hostStartNs);
      if (slot != nullptr) {
        *slot = want;
        ++heldCount;
      } else {
        for (size_t e = first; e < sent.size(); ++e) sent[e].writtenEarly = sent[e].held;
        recorder.recordTask(want);
        ++notHeld;
      }
      sent.push_back({want, slot != nullptr, false});
    }
    recorder.recordCallOp(op);
  }
  CHECK(heldCount > 0);
  CHECK(notHeld > 0);  // the ring did fill
  REQUIRE(recorder.close().ok());
  CHECK(recorder.stats().dropped == 0);
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  REQUIRE(file->ops.size() == size_t(kCalls));
  REQUIRE(file->tasks.size() == sent.size());
  CHECK(file->footer.records == kCalls + sent.size());
  // Each call's tasks in launch order, then its op line; every order number once.
  std::vector<std::pair<char, uint64_t>> want;
  for (int i = 0; i < kCalls; ++i) {
    for (int k = 0; k < i % 5; ++k) want.push_back({'t', uint64_t(i)});
    want.push_back({'o', uint64_t(i)});
  }
  CHECK(linesInOrder(*file) == want);
  for (int i = 0; i < kCalls; ++i) {
    OpRecord wantOp = testing::variedOp(0, uint64_t(i));
    CHECK(std::memcmp(&file->ops[i].record, &wantOp, sizeof(wantOp)) == 0);
  }
  // Every byte of every task; a held one has its call's times (to when it was written, if early).
  for (size_t t = 0; t < sent.size(); ++t) {
    const TaskRecord& got = file->tasks[t].record;
    const Sent& s = sent[t];
    const OpRecord op = testing::variedOp(0, s.want.seq);
    CHECK(sameBesideTimes(got, s.want));
    if (!s.held) {
      CHECK(std::memcmp(&got, &s.want, sizeof(got)) == 0);
    } else if (s.writtenEarly) {  // from the call's start to when it was written
      CHECK(got.startNs == op.hostStartNs);
      CHECK(got.endNs >= testStart);
      CHECK(got.endNs <= tscNowNs());
    } else {
      CHECK(got.startNs == op.hostStartNs);
      CHECK(got.endNs == op.hostEndNs);
    }
  }
}

TEST_CASE("another push of the thread, and a hold past the most held, write the held tasks first", "[trace]") {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  Recorder recorder(config);
  const int64_t before = tscNowNs();
  // Call 0: three tasks held, then a proxy record of the same thread: tasks, proxy, op.
  OpRecord op0 = testing::variedOp(0, 0);
  op0.hostStartNs = before;
  op0.hostEndNs = before + 1;
  for (int k = 0; k < 3; ++k) {
    TaskRecord* slot = recorder.holdTask(op0.hostStartNs);
    REQUIRE(slot != nullptr);
    *slot = variedTask(uint64_t(k));
    slot->seq = 0;
  }
  ProxyRecord proxy = variedProxy(0);
  proxy.seq = 0;
  recorder.recordProxy(proxy);
  recorder.recordCallOp(op0);
  // Call 1: one task more than are held: the first kMaxHeldTasks are written when it comes.
  const uint32_t kTasks = Recorder::kMaxHeldTasks + 1;
  OpRecord op1 = testing::variedOp(0, 1);
  op1.hostStartNs = before + 10;
  op1.hostEndNs = before + 11;
  for (uint32_t k = 0; k < kTasks; ++k) {
    TaskRecord* slot = recorder.holdTask(op1.hostStartNs);
    REQUIRE(slot != nullptr);
    *slot = variedTask(uint64_t(10 + k));
    slot->seq = 1;
  }
  recorder.recordCallOp(op1);
  REQUIRE(recorder.close().ok());
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  std::vector<std::pair<char, uint64_t>> want = {{'t', 0}, {'t', 0}, {'t', 0}, {'p', 0}, {'o', 0}};
  for (uint32_t k = 0; k < kTasks; ++k) want.push_back({'t', 1});
  want.push_back({'o', 1});
  CHECK(linesInOrder(*file) == want);
  REQUIRE(file->tasks.size() == 3 + kTasks);
  for (size_t t = 0; t < file->tasks.size(); ++t) {
    const TaskRecord& got = file->tasks[t].record;
    TaskRecord sentTask = variedTask(t < 3 ? uint64_t(t) : uint64_t(10 + t - 3));
    sentTask.seq = t < 3 ? 0 : 1;
    CHECK(sameBesideTimes(got, sentTask));
    const OpRecord& op = t < 3 ? op0 : op1;
    CHECK(got.startNs == op.hostStartNs);
    if (t < 3 + Recorder::kMaxHeldTasks) {
      CHECK(got.endNs >= before);  // written early: when the proxy / the last hold came
    } else {
      CHECK(got.endNs == op.hostEndNs);
    }
  }
  CHECK(std::memcmp(&file->proxies.at(0).record, &proxy, sizeof(proxy)) == 0);
}

TEST_CASE("tasks held in one recorder are counted dropped when the thread pushes to another", "[trace]") {
  TempDir dirA, dirB;
  RecorderConfig configA, configB;
  configA.dir = dirA.path();
  configB.dir = dirB.path();
  Recorder a(configA), b(configB);
  const OpRecord op = testing::variedOp(0, 0);
  for (int k = 0; k < 2; ++k) {
    TaskRecord* slot = a.holdTask(op.hostStartNs);
    REQUIRE(slot != nullptr);
    *slot = variedTask(uint64_t(k));
  }
  b.recordOp(testing::variedOp(1, 0));  // no call's record will follow them in a's ring
  a.recordCallOp(op);
  REQUIRE(a.close().ok());
  REQUIRE(b.close().ok());
  CHECK(a.stats().dropped == 2);
  auto fileA = readTraceFile(a.path());
  auto fileB = readTraceFile(b.path());
  REQUIRE(fileA.ok());
  REQUIRE(fileB.ok());
  CHECK(fileA->tasks.empty());
  REQUIRE(fileA->ops.size() == 1);
  CHECK(std::memcmp(&fileA->ops[0].record, &op, sizeof(op)) == 0);
  CHECK(fileB->ops.size() == 1);
  CHECK(fileB->tasks.empty());
}

TEST_CASE("prefetchPush gives a thread without a ring its ring, before any hold", "[trace]") {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  Recorder recorder(config);
  bool noRingBefore = false, ringAfter = false, held = false;
  std::thread fresh([&] {
    noRingBefore = detail::tThreadCache.ring == nullptr;
    recorder.prefetchPush();  // the frame's hint, before the NCCL call
    ringAfter = detail::tThreadCache.ring != nullptr && detail::tThreadCache.heldTasks == 0;
    const OpRecord op = testing::variedOp(2, 0);
    TaskRecord* slot = recorder.holdTask(op.hostStartNs);
    held = slot != nullptr;
    if (slot != nullptr) *slot = variedTask(0);
    recorder.recordCallOp(op);
  });
  fresh.join();
  CHECK(noRingBefore);
  CHECK(ringAfter);
  CHECK(held);
  REQUIRE(recorder.close().ok());
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  CHECK(file->tasks.size() == 1);
  CHECK(file->ops.size() == 1);
}

TEST_CASE("prefetchPush is a hint naming the slot the next push fills, harmless before pushes and across recorders",
          "[trace]") {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  config.ringRecords = 16;  // wraps many times below
  Recorder recorder(config);
  recorder.prefetchPush();  // before this thread has a ring in it (the cache may name another's)
  constexpr int kOps = 200;
  bool hintRight = true;
  for (int i = 0; i < kOps; ++i) {
    if (i == kOps / 2) {  // another recorder, pushed to and gone: the thread's cache names its ring
      TempDir otherDir;
      RecorderConfig other = config;
      other.dir = otherDir.path();
      Recorder second(other);
      second.recordOp(testing::variedOp(1, 0));
      REQUIRE(second.close().ok());
    }
    recorder.prefetchPush();
    recorder.recordOp(testing::variedOp(0, uint64_t(i)));
    RecordRing* ring = detail::tThreadCache.ring;
    RingSlot* next = detail::tThreadCache.nextSlot;
    hintRight = hintRight && ring != nullptr && next == ring->slotFromHead(0);
  }
  CHECK(hintRight);
  REQUIRE(recorder.close().ok());
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  REQUIRE(file->ops.size() == size_t(kOps));
  for (int i = 0; i < kOps; ++i) {
    OpRecord want = testing::variedOp(0, uint64_t(i));
    CHECK(file->ops[i].n == uint64_t(i));
    CHECK(std::memcmp(&file->ops[i].record, &want, sizeof(want)) == 0);
  }
}

const char* kGoodTask =
    R"({"type":"nccl_task","n":3,"task":"coll","comm":"0x1","seq":0,"flags":1,"nccl_comm":"0x2","nccl_seq":0,)"
    R"("rank":0,"nranks":2,"nnodes":2,"func":"AllReduce","count":4,"dtype":"float32","root":-1,"peer":-1,)"
    R"("algo":"RING","proto":"SIMPLE","channels":2,"warps":8,"t_start_ns":1,"t_end_ns":2})";
const char* kGoodProxy =
    R"({"type":"nccl_proxy","n":4,"comm":"0x1","seq":0,"flags":1,"nccl_comm":"0x2","rank":0,"func":"AllReduce",)"
    R"("dir":"send","channel":1,"peer":1,"steps":4,"chunk_size":131072,"steps_done":4,"bytes":4096,)"
    R"("t_start_ns":1,"t_end_ns":2})";

std::string mutate(const char* good, const std::string& key, const std::string& replacement) {
  std::string line = good;
  size_t at = line.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  size_t end = line.find_first_of(",}", line.find(':', at));
  if (replacement.empty()) {
    line.erase(at, end - at + (line[end] == ',' ? 1 : 0));
  } else {
    line.replace(at, end - at, "\"" + key + "\":" + replacement);
  }
  return line;
}

TEST_CASE("malformed nccl_task / nccl_proxy lines name their field", "[trace]") {
  auto good = parseTrace(withHeader(2, std::string(kGoodTask) + "\n" + kGoodProxy), "t.jsonl");
  REQUIRE(good.ok());
  REQUIRE(good->tasks.size() == 1);
  REQUIRE(good->proxies.size() == 1);
  CHECK(good->tasks[0].n == 3);
  CHECK(good->tasks[0].line == 2);
  CHECK(std::string(good->tasks[0].record.algo) == "RING");
  CHECK(good->proxies[0].record.bytes == 4096);
  CHECK(good->proxies[0].line == 3);
  struct Case {
    const char* line;
    std::string key, value, expect;
  };
  std::vector<Case> cases = {
      {kGoodTask, "task", "\"coll2\"", "field 'task': unknown value 'coll2'"},
      {kGoodTask, "algo", "", "field 'algo': missing"},
      {kGoodTask, "algo", "\"ABCDEFGHIJKLMNOPQRSTU\"", "field 'algo': longer than 15 bytes"},
      {kGoodTask, "proto", "\"SIMPLE12\"", "field 'proto': longer than 7 bytes"},
      {kGoodTask, "channels", "256", "field 'channels': 256 is outside"},
      {kGoodTask, "channels", "", "field 'channels': missing"},
      {kGoodTask, "dtype", "\"float33\"", "field 'dtype': unknown value 'float33'"},
      {kGoodTask, "nccl_comm", "\"0xzz\"", "field 'nccl_comm'"},
      {kGoodTask, "root", "-2", "field 'root': -2 is outside"},
      {kGoodTask, "seq", "-1", "field 'seq': must not be negative"},
      {kGoodTask, "func", "", "field 'func': missing"},
      {kGoodProxy, "dir", "\"both\"", "field 'dir': unknown value 'both'"},
      {kGoodProxy, "bytes", "", "field 'bytes': missing"},
      {kGoodProxy, "bytes", "-4", "field 'bytes': must not be negative"},
      {kGoodProxy, "channel", "-1", "field 'channel': -1 is outside"},
      {kGoodProxy, "steps_done", "\"4\"", "field 'steps_done': expected an integer"},
      {kGoodProxy, "comm", "", "field 'comm': missing"},
  };
  for (const Case& c : cases) {
    auto result = parseTrace(withHeader(2, mutate(c.line, c.key, c.value)), "t.jsonl");
    INFO(c.key << "=" << c.value);
    REQUIRE_FALSE(result.ok());
    INFO(result.status().message());
    CHECK(result.status().message().find("t.jsonl:2: " + c.expect) == 0);
  }
  // A p2p task reads its peer (and ignores root).
  auto p2p = parseTrace(withHeader(2, mutate(mutate(kGoodTask, "task", "\"p2p\"").c_str(), "peer", "5")), "t.jsonl");
  REQUIRE(p2p.ok());
  CHECK(p2p->tasks[0].record.kind == TaskKind::kP2p);
  CHECK(p2p->tasks[0].record.rootOrPeer == 5);
  // NCCL names no type for some tasks: "unknown" reads as none.
  auto untyped = parseTrace(withHeader(2, mutate(kGoodTask, "dtype", "\"unknown\"")), "t.jsonl");
  REQUIRE(untyped.ok());
  CHECK(untyped->tasks[0].record.datatype == kNoDatatype);
}

TEST_CASE("version-1 files still read; nccl lines in them are skipped", "[trace]") {
  // An inline version-1 file with an op line and, as a newer writer might add, an nccl_task line.
  const std::string op =
      R"({"type":"op","n":0,"comm":"0x1","rank":0,"seq":0,"op":"allreduce","count":4,"dtype":"float32",)"
      R"("redop":"sum","root":-1,"peer":-1,"nranks":2,"bytes":16,"stream":"0x0","group":0,)"
      R"("t_start_ns":1,"t_end_ns":2,"flags":0})";
  auto v1 = parseTrace(withHeader(1, op + "\n" + kGoodTask), "v1.jsonl");
  REQUIRE(v1.ok());
  CHECK(v1->header.version == 1);
  CHECK(v1->ops.size() == 1);
  CHECK(v1->tasks.empty());
  CHECK(v1->ignoredLines == 1);
  // The committed example traces were written as version 1.
  for (const char* dir : {"examples/traces/megatron_tp2", "examples/traces/torch_collectives"}) {
    auto set = readTraceDir(dir);
    INFO(dir);
    REQUIRE(set.ok());
    REQUIRE(!set->files.empty());
    for (const TraceFile& file : set->files) {
      CHECK(file.header.version == 1);
      CHECK(file.ops.size() > 0);
      CHECK(file.tasks.empty());
      CHECK(file.proxies.empty());
      CHECK(file.endsWithFooter);
    }
  }
}

TEST_CASE("validation counts nccl lines in the footer and checks their joins", "[trace]") {
  // The committed version-2 example: every task and proxy line joined to an op, footer counts match.
  auto example = readTraceDir("examples/traces/nccl_decisions_allreduce_n2");
  REQUIRE(example.ok());
  for (const TraceFile& file : example->files) {
    CHECK(file.header.version == 2);
    CHECK(file.tasks.size() == 104);
    CHECK(file.footer.records == file.comms.size() + file.ops.size() + file.tasks.size() + file.proxies.size());
  }
  ValidationReport clean = validateTraceSet(*example);
  CHECK(clean.errors.empty());
  CHECK(clean.warnings.empty());
  // A joined task whose op is missing is named.
  const std::string comm =
      R"({"type":"comm","n":0,"event":"init","comm":"0x1","parent":"0x0","split_seq":0,"color":0,"key":0,)"
      R"("nranks":1,"rank":0,"global_rank":0,"host":"h","pid":1,"device":0,"t_ns":1})";
  auto orphan = parseTrace(withHeader(2, comm + "\n" + kGoodTask), "t.jsonl");
  REQUIRE(orphan.ok());
  TraceSet set;
  set.files.push_back(*orphan);
  ValidationReport report = validateTraceSet(set);
  int named = 0;  // (the other warning: the file has no footer)
  for (const std::string& w : report.warnings) {
    if (w.find("t.jsonl:3: nccl_task AllReduce names comm 0x0000000000000001 seq 0, which has no op line") !=
        std::string::npos) {
      ++named;
    }
  }
  CHECK(named == 1);
}

}  // namespace
}  // namespace nshim::trace
