// The op-by-op comparison of two diff views and its text report (rules in trace_diff.h).
#include "tools/inspect/trace_diff.h"

#include <algorithm>
#include <map>

#include "trace/trace_validate.h"

namespace nshim::tools {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

std::string commText(const DiffSide& side, size_t index) {
  const DiffComm& c = side.comms[index];
  return fmt::format("{} ({}, {} ranks)", trace::commIdText(c.id), c.label, c.members.size());
}

// For each communicator of `a`, the index of its partner in `b` (kNone: unmatched).
std::vector<size_t> matchComms(const DiffSide& a, const DiffSide& b, bool byId) {
  std::map<std::pair<std::vector<int>, uint64_t>, std::vector<size_t>> pool;  // key -> b's comms, in order
  auto key = [byId](const DiffComm& c) {
    return byId || c.members.empty() ? std::pair{std::vector<int>{}, c.id} : std::pair{c.members, uint64_t{0}};
  };
  for (size_t j = 0; j < b.comms.size(); ++j) pool[key(b.comms[j])].push_back(j);
  std::map<std::pair<std::vector<int>, uint64_t>, size_t> used;
  std::vector<size_t> match(a.comms.size(), kNone);
  for (size_t i = 0; i < a.comms.size(); ++i) {
    auto k = key(a.comms[i]);
    auto it = pool.find(k);
    size_t& next = used[k];
    if (it != pool.end() && next < it->second.size()) match[i] = it->second[next++];
  }
  return match;
}

// Per communicator: sequence number -> the indices of a rank's ops with it (one, unless the
// input repeats a number).
using SeqIndex = std::vector<std::map<uint64_t, std::vector<size_t>>>;
SeqIndex indexBySeq(const std::vector<DiffOp>& ops, size_t comms) {
  SeqIndex index(comms);
  for (size_t k = 0; k < ops.size(); ++k) index[ops[k].comm][ops[k].seq].push_back(k);
  return index;
}

class Comparer {
 public:
  Comparer(const DiffSide& a, const DiffSide& b, const DiffOptions& o) : a_(a), b_(b), options_(o) {}

  DiffResult run() {
    if (a_.worldSize != b_.worldSize) {
      add({-1, "", false, 0, "ranks", std::to_string(a_.worldSize), std::to_string(b_.worldSize), "", ""});
    }
    std::vector<size_t> match = matchComms(a_, b_, options_.matchById);
    std::vector<size_t> matchedB(b_.comms.size(), kNone);
    for (size_t i = 0; i < match.size(); ++i) {
      if (match[i] == kNone) continue;
      matchedB[match[i]] = i;
      ++result_.matchedComms;
    }
    const int ranks = std::min(a_.worldSize, b_.worldSize);
    for (int g = 0; g < ranks; ++g) compareRank(g, match, matchedB);
    return std::move(result_);
  }

 private:
  void add(Divergence d) {
    if (result_.listed.size() < options_.maxListed) result_.listed.push_back(std::move(d));
    ++result_.total;
  }

  static std::string described(const DiffOp& op) { return fmt::format("{} at {}", describeDiffOp(op), op.where); }

  void compareRank(int g, const std::vector<size_t>& match, const std::vector<size_t>& matchedB) {
    const std::vector<DiffOp>& opsA = a_.ranks[g];
    const std::vector<DiffOp>& opsB = b_.ranks[g];
    SeqIndex seqA = indexBySeq(opsA, a_.comms.size());
    SeqIndex seqB = indexBySeq(opsB, b_.comms.size());
    std::vector<bool> pairedB(opsB.size(), false);
    std::vector<bool> reportedComm(a_.comms.size(), false);
    std::map<std::pair<size_t, uint64_t>, size_t> occurrence;  // (comm, seq) -> how many of A's seen
    for (const DiffOp& op : opsA) {                            // the first input's issue order
      const size_t cb = match[op.comm];
      if (cb == kNone) {
        if (!reportedComm[op.comm]) {
          reportedComm[op.comm] = true;
          add({g, commText(a_, op.comm), true, op.seq, "communicator", "present", "(none)", described(op), ""});
        }
        continue;
      }
      const size_t nth = occurrence[{op.comm, op.seq}]++;
      auto it = seqB[cb].find(op.seq);
      if (it == seqB[cb].end() || nth >= it->second.size()) {
        add({g, commText(a_, op.comm), true, op.seq, "op", op.fields[kFieldOp], "(none)", described(op), ""});
        continue;
      }
      pairedB[it->second[nth]] = true;
      compareOps(g, op, opsB[it->second[nth]]);
    }
    std::vector<bool> reportedB(b_.comms.size(), false);
    for (size_t y = 0; y < opsB.size(); ++y) {
      const DiffOp& op = opsB[y];
      if (pairedB[y]) continue;
      const size_t ca = matchedB[op.comm];
      if (ca == kNone) {
        if (!reportedB[op.comm]) {
          reportedB[op.comm] = true;
          add({g, commText(b_, op.comm), true, op.seq, "communicator", "(none)", "present", "", described(op)});
        }
        continue;
      }
      add({g, commText(a_, ca), true, op.seq, "op", "(none)", op.fields[kFieldOp], "", described(op)});
    }
  }

  void compareOps(int g, const DiffOp& x, const DiffOp& y) {
    ++result_.comparedOps;
    for (int f = 0; f < kNumDiffFields; ++f) {
      const std::string& va = x.fields[f];
      const std::string& vb = y.fields[f];
      if (va.empty() || vb.empty() || va == vb) continue;
      add({g, commText(a_, x.comm), true, x.seq, diffFieldName(f), va, vb, described(x), described(y)});
      return;  // one divergence per op: its first differing field
    }
  }

  const DiffSide& a_;
  const DiffSide& b_;
  const DiffOptions& options_;
  DiffResult result_;
};

void printDivergence(FILE* out, const Divergence& d, const char* indent) {
  if (d.rank < 0) {
    fmt::print(out, "{}{}: a {}, b {}\n", indent, d.field, d.a, d.b);
    return;
  }
  fmt::print(out, "{}rank {}, comm {}, seq {}, field {}: a {}, b {}\n", indent, d.rank, d.comm, d.seq, d.field, d.a,
             d.b);
}

}  // namespace

DiffResult compareSides(const DiffSide& a, const DiffSide& b, const DiffOptions& options) {
  return Comparer(a, b, options).run();
}

void printDiff(FILE* out, const DiffSide& a, const DiffSide& b, const DiffResult& r, const DiffOptions& options) {
  for (const DiffSide* side : {&a, &b}) {
    fmt::print(out, "{}: {} ({}: {} ranks, {} communicators with ops, {} ops)\n", side == &a ? "a" : "b", side->name,
               side->kind, side->worldSize, side->comms.size(), side->opCount());
    for (const std::string& note : side->notes) fmt::print(out, "   note: {}\n", note);
  }
  fmt::print(out, "communicators matched {} ({}), op pairs compared {}\n", r.matchedComms,
             options.matchById ? "by id" : "by members and creation order", r.comparedOps);
  if (r.same()) {
    fmt::print(out, "same\n");
    return;
  }
  const Divergence& first = r.listed.front();
  fmt::print(out, "different: {} divergence(s)\n", r.total);
  printDivergence(out, first, "first divergence: ");
  if (!first.opA.empty()) fmt::print(out, "  a: {}\n", first.opA);
  if (!first.opB.empty()) fmt::print(out, "  b: {}\n", first.opB);
  if (r.listed.size() > 1) {
    fmt::print(out, "divergences (the first {} of {}):\n", r.listed.size(), r.total);
    for (const Divergence& d : r.listed) printDivergence(out, d, "  ");
  }
}

}  // namespace nshim::tools
