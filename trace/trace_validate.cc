// Trace validation: first each file on its own (records, sequence numbers, fields), then each
// communicator across the files of its members (size, ranks, the same collectives in the same
// order, sends matched by receives). The first mismatch per communicator is reported.
#include "trace/trace_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/rank_ranges.h"
#include "trace/trace_format.h"

namespace nshim::trace {
namespace {

using MemberKey = std::pair<uint64_t, int32_t>;  // (comm id, rank in comm)

struct Member {
  const TraceFile* file = nullptr;
  const CommEntry* created = nullptr;
  std::vector<const OpEntry*> ops;  // sorted by seq
};

class Validator {
 public:
  void error(std::string_view kind, std::string message) { add(kind, true, std::move(message)); }
  void warning(std::string_view kind, std::string message) { add(kind, false, std::move(message)); }
  ValidationReport take() { return std::move(report_); }

  void checkFile(const TraceFile& file);
  void checkCommunicators();
  void checkJob(const TraceSet& set);

 private:
  void add(std::string_view kind, bool isError, std::string message) {
    (isError ? report_.errorCount : report_.warningCount) += 1;
    size_t& seen = seenPerKind_[std::string(kind)];
    if (++seen <= kMessagesShownPerKind) {
      (isError ? report_.errors : report_.warnings).push_back(std::move(message));
      return;
    }
    if (seen == kMessagesShownPerKind + 1) report_.notShown.push_back({std::string(kind), isError, 0});
    for (auto& entry : report_.notShown) {
      if (entry.kind == kind && entry.error == isError) ++entry.count;
    }
  }
  void checkOpFields(const TraceFile& file, const OpEntry& op, int32_t commSize);
  void checkNcclJoins(const TraceFile& file);
  void compareCollectives(uint64_t comm, const std::map<int32_t, Member*>& members);
  void compareP2p(uint64_t comm, const std::map<int32_t, Member*>& members);

  ValidationReport report_;
  std::map<std::string, size_t, std::less<>> seenPerKind_;
  std::map<MemberKey, Member> members_;
};

std::string where(const TraceFile& file, int64_t line) { return fmt::format("{}:{}", file.path, line); }

bool isRooted(OpCode op) {
  return op == OpCode::kBroadcast || op == OpCode::kReduce || op == OpCode::kGather || op == OpCode::kScatter;
}
bool isReduction(OpCode op) {
  return op == OpCode::kAllReduce || op == OpCode::kReduce || op == OpCode::kReduceScatter;
}
bool isP2p(OpCode op) { return op == OpCode::kSend || op == OpCode::kRecv; }
bool isGroup(OpCode op) { return op == OpCode::kGroupStart || op == OpCode::kGroupEnd; }

void Validator::checkFile(const TraceFile& file) {
  std::map<MemberKey, const CommEntry*> ended;
  std::vector<MemberKey> mine;
  for (const CommEntry& c : file.comms) {
    MemberKey key{c.record.commId, c.record.rank};
    if (c.record.event == CommEvent::kInit || c.record.event == CommEvent::kSplit) {
      if (c.record.nranks <= 0 || c.record.rank < 0 || c.record.rank >= c.record.nranks) {
        error("comm created with a rank outside it",
              fmt::format("{}: comm {} created with rank {} of {} ranks", where(file, c.line),
                          commIdText(c.record.commId), c.record.rank, c.record.nranks));
        continue;
      }
      Member& m = members_[key];
      if (m.created != nullptr) {
        error("comm rank created twice",
              fmt::format("{}: comm {} rank {} created again (first at {})", where(file, c.line), commIdText(key.first),
                          key.second, where(*m.file, m.created->line)));
        continue;
      }
      m.file = &file;
      m.created = &c;
      mine.push_back(key);
    } else if (!ended.count(key)) {
      ended[key] = &c;
    }
  }
  bool lossy = file.dropped > 0 || file.truncated;
  for (const OpEntry& op : file.ops) {
    const OpRecord& r = op.record;
    if (isGroup(r.op)) continue;
    MemberKey key{r.commId, r.rank};
    auto it = members_.find(key);
    if (it == members_.end() || it->second.file != &file) {
      error("op on a comm not created in its file",
            fmt::format("{}: {} on comm {} rank {}, which has no init/split record in this file", where(file, op.line),
                        opName(r.op), commIdText(r.commId), r.rank));
      continue;
    }
    auto end = ended.find(key);
    if (end != ended.end() && end->second->n < op.n) {
      error("op after its comm ended",
            fmt::format("{}: {} on comm {} after its {} at line {}", where(file, op.line), opName(r.op),
                        commIdText(r.commId), commEventName(end->second->record.event), end->second->line));
    }
    checkOpFields(file, op, it->second.created->record.nranks);
    it->second.ops.push_back(&op);
  }
  for (const MemberKey& key : mine) {
    auto& ops = members_[key].ops;
    std::sort(ops.begin(), ops.end(), [](const OpEntry* a, const OpEntry* b) { return a->record.seq < b->record.seq; });
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]->record.seq == i) continue;
      std::string message = fmt::format("{}: comm {} rank {}: sequence number {} where {} was expected ({})",
                                        where(file, ops[i]->line), commIdText(key.first), key.second,
                                        ops[i]->record.seq, i, ops[i]->record.seq < i ? "duplicate" : "gap");
      if (lossy) warning("sequence gap or duplicate", message + " (the file lost records)");
      else error("sequence gap or duplicate", message);
      break;
    }
  }
  if (file.truncated || !file.endsWithFooter)
    warning("file not closed", fmt::format("{}: {}", file.path, file.endDescription()));
  if (file.dropped > 0)
    warning("records dropped", fmt::format("{}: the writer dropped {} records (buffer full)", file.path, file.dropped));
  if (file.hasFooter && file.footer.cut[0] != '\0') {
    warning("recording cut",
            fmt::format("{}: recording stopped at NCCLSHIM_TRACE_MAX_MB ({} bytes): the file holds the "
                        "first {} records of the process",
                        file.path, file.footer.maxBytes, file.footer.records));
  }
  const uint64_t held =
      file.comms.size() + file.ops.size() + file.tasks.size() + file.proxies.size() + file.steps.size();
  if (file.endsWithFooter && file.footer.records != held) {
    warning("footer count differs",
            fmt::format("{}: footer counts {} records, the file holds {}", file.path, file.footer.records, held));
  }
  checkNcclJoins(file);
}

// Version 2: an nccl_task / nccl_proxy line marked joined names an op of its file (comm + seq).
void Validator::checkNcclJoins(const TraceFile& file) {
  if (file.tasks.empty() && file.proxies.empty()) return;
  std::set<std::pair<uint64_t, uint64_t>> calls;
  for (const OpEntry& op : file.ops) calls.insert({op.record.commId, op.record.seq});
  for (const TaskEntry& t : file.tasks) {
    if ((t.record.flags & kTaskJoined) && !calls.count({t.record.commId, t.record.seq})) {
      warning("nccl line joined to no op",
              fmt::format("{}: nccl_task {} names comm {} seq {}, which has no op line", where(file, t.line),
                          t.record.func, commIdText(t.record.commId), t.record.seq));
    }
  }
  for (const ProxyEntry& p : file.proxies) {
    if ((p.record.flags & kTaskJoined) && !calls.count({p.record.commId, p.record.seq})) {
      warning("nccl line joined to no op",
              fmt::format("{}: nccl_proxy {} names comm {} seq {}, which has no op line", where(file, p.line),
                          p.record.func, commIdText(p.record.commId), p.record.seq));
    }
  }
}

void Validator::checkOpFields(const TraceFile& file, const OpEntry& op, int32_t commSize) {
  const OpRecord& r = op.record;
  auto at = [&] { return fmt::format("{}: {} seq {}", where(file, op.line), opName(r.op), r.seq); };
  if (r.nranks != commSize) {
    error("op nranks differs from its comm",
          fmt::format("{}: nranks {} but the comm has {}", at(), r.nranks, commSize));
  }
  if (datatypeSize(r.datatype) == 0) error("no valid datatype", fmt::format("{}: no valid datatype", at()));
  if (isReduction(r.op) && r.redop == kNoRedOp) {
    error("reduction without a redop", fmt::format("{}: reduction without a redop", at()));
  }
  if (isRooted(r.op) && (r.root < 0 || r.root >= commSize)) {
    error("root outside the comm", fmt::format("{}: root {} outside the comm", at(), r.root));
  }
  if (isP2p(r.op) && (r.peer < 0 || r.peer >= commSize)) {
    error("peer outside the comm", fmt::format("{}: peer {} outside the comm", at(), r.peer));
  }
  uint64_t expected = 0;
  if (!traceBytesFit(r.op, r.count, r.datatype, commSize, &expected)) {
    error("count too large",
          fmt::format("{}: field 'count': {} {} elements on the comm's {} ranks is more than 2^64 bytes", at(), r.count,
                      datatypeName(r.datatype), commSize));
  } else if (r.bytes != expected) {
    warning("bytes differ from the bytes rule",
            fmt::format("{}: bytes {} but the bytes rule gives {}", at(), r.bytes, expected));
  }
}

void Validator::checkCommunicators() {
  std::map<uint64_t, std::map<int32_t, Member*>> comms;
  for (auto& [key, member] : members_) {
    if (member.created != nullptr) comms[key.first][key.second] = &member;
  }
  for (auto& [comm, members] : comms) {
    int32_t nranks = members.begin()->second->created->record.nranks;
    bool sizesAgree = true;
    for (auto& [rank, m] : members) {
      if (m->created->record.nranks != nranks) {
        error(
            "members disagree on the comm size",
            fmt::format("comm {}: rank {} ({}) says {} ranks, rank {} says {}", commIdText(comm), rank,
                        where(*m->file, m->created->line), m->created->record.nranks, members.begin()->first, nranks));
        sizesAgree = false;
      }
    }
    if (!sizesAgree) continue;
    if (static_cast<int32_t>(members.size()) < nranks) {
      warning("comm members without a file", fmt::format("comm {}: {} of {} ranks have records (missing trace files?)",
                                                         commIdText(comm), members.size(), nranks));
    }
    compareCollectives(comm, members);
    compareP2p(comm, members);
  }
}

void Validator::compareCollectives(uint64_t comm, const std::map<int32_t, Member*>& members) {
  std::map<int32_t, std::vector<const OpEntry*>> lists;
  for (auto& [rank, m] : members) {
    for (const OpEntry* op : m->ops) {
      if (!isP2p(op->record.op)) lists[rank].push_back(op);
    }
  }
  auto& [firstRank, first] = *members.begin();
  const auto& reference = lists[firstRank];
  for (auto& [rank, m] : members) {
    const auto& mine = lists[rank];
    size_t common = std::min(mine.size(), reference.size());
    for (size_t i = 0; i < common; ++i) {
      const OpRecord& a = reference[i]->record;
      const OpRecord& b = mine[i]->record;
      bool same = a.op == b.op && a.count == b.count && a.datatype == b.datatype && a.root == b.root &&
                  (a.redop == b.redop || (a.flags & b.flags & kOpFlagPreMulSum));
      if (!same) {
        error("collectives differ between ranks",
              fmt::format("comm {}: collective #{} differs: rank {} {} count {} {} root {} ({}) vs rank {} {} count {} "
                          "{} root {} ({})",
                          commIdText(comm), i, firstRank, opName(a.op), a.count, datatypeName(a.datatype), a.root,
                          where(*first->file, reference[i]->line), rank, opName(b.op), b.count,
                          datatypeName(b.datatype), b.root, where(*m->file, mine[i]->line)));
        return;
      }
    }
    if (mine.size() != reference.size()) {
      error("collective counts differ between ranks",
            fmt::format("comm {}: rank {} issued {} collectives, rank {} issued {}", commIdText(comm), firstRank,
                        reference.size(), rank, mine.size()));
      return;
    }
  }
}

void Validator::compareP2p(uint64_t comm, const std::map<int32_t, Member*>& members) {
  // (src, dst) -> payload bytes of each message in order, as sent and as received.
  std::map<std::pair<int32_t, int32_t>, std::vector<uint64_t>> sent, received;
  for (auto& [rank, m] : members) {
    for (const OpEntry* op : m->ops) {
      const OpRecord& r = op->record;
      uint64_t bytes = r.count * datatypeSize(r.datatype);  // fits: the reader refuses a count that does not
      if (r.op == OpCode::kSend) sent[{rank, r.peer}].push_back(bytes);
      if (r.op == OpCode::kRecv) received[{r.peer, rank}].push_back(bytes);
    }
  }
  auto check = [&](int32_t src, int32_t dst) {
    if (!members.count(src) || !members.count(dst)) return;  // a side has no file: cannot check
    const auto& s = sent[{src, dst}];
    const auto& r = received[{src, dst}];
    for (size_t i = 0; i < std::min(s.size(), r.size()); ++i) {
      if (s[i] != r[i]) {
        error("send and receive sizes differ",
              fmt::format("comm {}: message #{} from rank {} to rank {}: {} bytes sent, {} bytes received",
                          commIdText(comm), i, src, dst, s[i], r[i]));
        return;
      }
    }
    if (s.size() != r.size()) {
      error("send and receive counts differ",
            fmt::format("comm {}: rank {} sends {} messages to rank {}, which receives {}", commIdText(comm), src,
                        s.size(), dst, r.size()));
    }
  };
  std::map<std::pair<int32_t, int32_t>, bool> pairs;
  for (auto& [key, list] : sent) pairs[key] = true;
  for (auto& [key, list] : received) pairs[key] = true;
  for (auto& [key, unused] : pairs) check(key.first, key.second);
}

}  // namespace

std::string commIdText(uint64_t commId) { return fmt::format("0x{:016x}", commId); }

// A job's files together: files of another job (the header's `job`), ranks without a file (the
// world: the largest communicator, or the highest rank seen), files still named .part.
void Validator::checkJob(const TraceSet& set) {
  std::map<std::string, size_t> jobs;
  for (const TraceFile& file : set.files) {
    if (file.header.job[0] != '\0') ++jobs[file.header.job];
  }
  if (jobs.size() > 1) {
    auto most = std::max_element(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.second < b.second; });
    for (const TraceFile& file : set.files) {
      if (file.header.job[0] == '\0' || most->first == file.header.job) continue;
      error("file of another job",
            fmt::format("{}: from another job: {} (global rank {}); the other {} files are of "
                        "job {}",
                        file.path, file.header.job, file.globalRank(), most->second, most->first));
    }
  }
  int32_t world = 0;
  std::set<int32_t> ranks;
  for (const TraceFile& file : set.files) {
    if (file.globalRank() >= 0) ranks.insert(file.globalRank());
    world = std::max(world, file.globalRank() + 1);
    for (const CommEntry& comm : file.comms) world = std::max(world, comm.record.nranks);
  }
  int64_t missing = 0;
  const std::string missingText = missingRankRangesText(std::vector<int>(ranks.begin(), ranks.end()), world, &missing);
  if (missing > 0 && set.files.size() > 1) {  // one file: "comm members without a file" says it
    warning("ranks without a file",
            fmt::format("{} of {} ranks have no trace file: global ranks {}", missing, world, missingText));
  }
  for (const TraceFile& file : set.files) {
    if (file.path.size() > 5 && file.path.substr(file.path.size() - 5) == ".part") {
      warning("incomplete file", fmt::format("{}: incomplete: still named .part (its process is still recording, or "
                                             "ended without closing the trace: killed, _exit)",
                                             file.path));
    }
  }
}

ValidationReport validateTraceSet(const TraceSet& set) {
  Validator validator;
  for (const TraceFile& file : set.files) validator.checkFile(file);
  validator.checkCommunicators();
  validator.checkJob(set);
  return validator.take();
}

}  // namespace nshim::trace
