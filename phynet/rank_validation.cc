// Validation across ranks from digests, with the detail fetched only where it is needed
// (rank_validation.h).
#include "phynet/rank_validation.h"

#include <cstdlib>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "phynet/comm_digest.h"
#include "phynet/op_packing.h"
#include "phynet/rank_messages.h"
#include "phynet/workload_names.h"
#include "workload/workload_check.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

// Communicators whose members disagree that rank 0 fetches in detail: enough to name the first
// problem, few enough that a file that disagrees everywhere does not bring the world to rank 0.
constexpr size_t kMaxDisagreeingExamined = 16;

// A text packed with packLines (messages may have several lines).
std::string joinedLines(const std::vector<int64_t>& words) {
  std::string text;
  for (const std::string& line : unpackLines(words)) text += (text.empty() ? "" : "\n") + line;
  return text;
}

// What each rank tells rank 0 first.
struct RankFacts {
  uint64_t fingerprint = 0;
  uint64_t ops = 0;
  uint64_t filteredOut = 0;
  std::vector<int64_t> digest;
  std::string problem;  // checkRankStructure's message, "" when fine
};

std::vector<int64_t> packFacts(const RankFacts& f) {
  std::vector<int64_t> words{static_cast<int64_t>(f.fingerprint), static_cast<int64_t>(f.ops),
                             static_cast<int64_t>(f.filteredOut), static_cast<int64_t>(f.digest.size())};
  words.insert(words.end(), f.digest.begin(), f.digest.end());
  std::vector<int64_t> text = packLines({f.problem});
  words.insert(words.end(), text.begin(), text.end());
  return words;
}

RankFacts unpackFacts(const std::vector<int64_t>& words) {
  RankFacts f;
  if (words.size() < 4 || words[3] < 0 || static_cast<size_t>(words[3]) > words.size() - 4) return f;
  f.fingerprint = static_cast<uint64_t>(words[0]);
  f.ops = static_cast<uint64_t>(words[1]);
  f.filteredOut = static_cast<uint64_t>(words[2]);
  const auto digestEnd = words.begin() + 4 + words[3];
  f.digest.assign(words.begin() + 4, digestEnd);
  f.problem = joinedLines(std::vector<int64_t>(digestEnd, words.end()));
  return f;
}

// Rank 0's verdict from what every rank said, before any op is fetched ("" = so far so good).
std::string firstVerdict(const LoadedInput& input, const std::vector<RankFacts>& facts, uint64_t totalOps,
                         uint64_t filteredOut) {
  const Workload& w = input.workload;
  const int size = static_cast<int>(facts.size());
  if (w.worldSize != size) {
    const bool srun = std::getenv("SLURM_STEP_ID") != nullptr && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr;
    return fmt::format("the workload has {} ranks but {} started {}: run with {} {}", w.worldSize,
                       srun ? "srun" : "mpirun", size, srun ? "-n" : "-np", w.worldSize);
  }
  for (int r = 1; r < size; ++r) {
    if (facts[r].fingerprint != facts[0].fingerprint) {
      return fmt::format(
          "rank {} read a different workload than rank 0 (fingerprint {:#x} vs {:#x}): the input "
          "differs between hosts",
          r, facts[r].fingerprint, facts[0].fingerprint);
    }
  }
  if (totalOps == 0) {
    if (filteredOut > 0) return fmt::format("no operations to replay: --ops / --groups removed all {}", filteredOut);
    if (!w.skipped.empty()) return "no operations to replay: every row moves no data (" + skippedText(w.skipped) + ")";
    return "no operations to replay: the input holds no communication";
  }
  Workload comms;  // the communicators alone: their structure (checkWorkload with no ops)
  comms.worldSize = w.worldSize;
  comms.comms = w.comms;
  comms.ranks.resize(static_cast<size_t>(w.worldSize));
  for (int g = 0; g < w.worldSize; ++g) comms.ranks[g].globalRank = g;
  Status structure = checkWorkload(comms);
  if (!structure.ok()) return structure.message();
  for (const RankFacts& f : facts) {
    if (!f.problem.empty()) return f.problem;
  }
  return "";
}

// The ids of the communicators some rank's digest names, ascending.
std::vector<uint64_t> usedCommunicatorIds(const Workload& w, const std::vector<RankFacts>& facts) {
  std::set<uint64_t> used;
  for (const RankFacts& f : facts) {
    for (size_t i = 0; i + 3 < f.digest.size(); i += 4) {
      const uint64_t index = static_cast<uint64_t>(f.digest[i]);
      if (index < w.comms.size()) used.insert(w.comms[index].id);
    }
  }
  return {used.begin(), used.end()};
}

}  // namespace

RankValidation validateAcrossRanks(const LoadedInput& input, uint64_t fingerprint, MpiSession& mpi) {
  const Workload& w = input.workload;
  const int self = mpi.rank();
  const bool mine = self < static_cast<int>(w.ranks.size());
  RankFacts own;
  own.fingerprint = fingerprint;
  own.filteredOut = input.filteredOut;
  if (mine) {
    own.ops = w.ranks[self].ops.size();
    own.digest = digestRankOps(w, self);
    Status structure = checkRankStructure(w, self);
    if (!structure.ok()) own.problem = structure.message();
  }
  std::vector<std::vector<int64_t>> gathered = mpi.gatherToRoot(packFacts(own), "validation: digests");

  RankValidation out;
  std::string verdict;
  CommsToExamine examine;
  std::vector<int64_t> wanted;  // comm ids rank 0 asks every rank for
  std::vector<uint64_t> used;
  if (self == 0) {
    std::vector<RankFacts> facts;
    for (const std::vector<int64_t>& words : gathered) facts.push_back(unpackFacts(words));
    gathered.clear();
    for (const RankFacts& f : facts) {
      out.totalOps += f.ops;
      out.filteredOut += f.filteredOut;
    }
    verdict = firstVerdict(input, facts, out.totalOps, out.filteredOut);
    used = usedCommunicatorIds(w, facts);
    if (verdict.empty()) {
      examine = commsToExamine(
          w,
          [&] {
            std::vector<std::vector<int64_t>> digests;
            for (RankFacts& f : facts) digests.push_back(std::move(f.digest));
            return digests;
          }(),
          kMaxDisagreeingExamined);
      for (uint64_t id : examine.disagreeing) wanted.push_back(static_cast<int64_t>(id));
      for (uint64_t id : examine.pointToPoint) {
        if (std::find(examine.disagreeing.begin(), examine.disagreeing.end(), id) == examine.disagreeing.end()) {
          wanted.push_back(static_cast<int64_t>(id));
        }
      }
    }
  }
  // The verdict so far rides along: an empty list with a verdict fetches nothing.
  mpi.broadcastWords(&wanted, 0, "validation: communicators to examine");

  if (!wanted.empty()) {
    std::unordered_set<uint64_t> ids;
    for (int64_t id : wanted) ids.insert(static_cast<uint64_t>(id));
    std::vector<int64_t> words =
        mine ? packOps(w.ranks[self].ops, [&](const WorkOp& op) { return ids.count(op.commId) > 0; }) : packOps({});
    std::vector<std::vector<int64_t>> detail = mpi.gatherToRoot(words, "validation: operations to examine");
    if (self == 0 && verdict.empty()) {
      Workload partial;
      partial.worldSize = w.worldSize;
      partial.comms = w.comms;
      partial.indexComms();
      partial.ranks.resize(static_cast<size_t>(w.worldSize));
      for (int g = 0; g < w.worldSize && verdict.empty(); ++g) {
        partial.ranks[g].globalRank = g;
        Result<std::vector<WorkOp>> ops = unpackOps(detail[g]);
        if (!ops.ok())
          verdict = fmt::format("rank {}'s operations did not arrive intact: {}", g, ops.status().message());
        else partial.ranks[g].ops = std::move(ops).value();
        out.opsExamined += partial.ranks[g].ops.size();
        detail[g] = {};
      }
      Status checked = verdict.empty() ? checkWorkload(partial) : Status::Ok();
      if (!checked.ok()) {
        verdict = checked.message();
      } else if (verdict.empty() && examine.disagreeingTotal > 0) {
        const CommGroup* comm = w.findComm(examine.disagreeing.front());
        verdict = fmt::format(
            "the ranks of communicator {} issue different operations on it (their digests "
            "differ), but no single difference was found",
            comm ? commName(*comm) : "?");
      }
    }
  }

  std::vector<int64_t> outcome;
  if (self == 0) {
    outcome.push_back(static_cast<int64_t>(used.size()));
    for (uint64_t id : used) outcome.push_back(static_cast<int64_t>(id));
    std::vector<int64_t> text = packLines({verdict});
    outcome.insert(outcome.end(), text.begin(), text.end());
  }
  mpi.broadcastWords(&outcome, 0, "validation verdict");
  const size_t nUsed = outcome.empty() ? 0 : static_cast<size_t>(std::max<int64_t>(outcome[0], 0));
  for (size_t i = 0; i < nUsed && 1 + i < outcome.size(); ++i)
    out.usedComms.push_back(static_cast<uint64_t>(outcome[1 + i]));
  if (1 + nUsed <= outcome.size()) {
    out.verdict =
        joinedLines(std::vector<int64_t>(outcome.begin() + 1 + static_cast<std::ptrdiff_t>(nUsed), outcome.end()));
  }
  return out;
}

}  // namespace nshim::phynet
