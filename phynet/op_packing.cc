// Packing of WorkOps into int64 words: [file table (packLines)] [op count] [kWordsPerOp per op].
#include "phynet/op_packing.h"

#include <string>
#include <unordered_map>

#include "phynet/rank_messages.h"

namespace nshim::phynet {
namespace {

constexpr size_t kWordsPerOp = 13;

int64_t packKinds(const WorkOp& op) {
  return static_cast<int64_t>(op.type) | static_cast<int64_t>(op.reduce) << 8 | static_cast<int64_t>(op.kind) << 16 |
         static_cast<int64_t>(op.algo) << 24 | static_cast<int64_t>(op.channels) << 32 |
         static_cast<int64_t>(op.proto) << 40 | static_cast<int64_t>(op.origin) << 48 |
         static_cast<int64_t>(op.recordedClock) << 56;
}

}  // namespace

std::vector<int64_t> packOps(const std::vector<WorkOp>& ops, const std::function<bool(const WorkOp&)>& keep) {
  std::vector<std::string> files;
  std::unordered_map<std::string_view, int64_t> fileIndex;
  std::vector<int64_t> body;
  int64_t count = 0;
  for (const WorkOp& op : ops) {
    if (keep && !keep(op)) continue;
    int64_t file = -1;
    if (!op.source.empty()) {
      auto [it, added] = fileIndex.emplace(op.source.file(), static_cast<int64_t>(files.size()));
      if (added) files.emplace_back(op.source.file());
      file = it->second;
    }
    body.insert(body.end(),
                {static_cast<int64_t>(op.commId), static_cast<int64_t>(op.seq), static_cast<int64_t>(op.count),
                 packKinds(op), op.root, op.peer, static_cast<int64_t>(op.bytes), op.issueNs, op.computeNs,
                 op.recordedNs, op.group, file, op.source.line()});
    ++count;
  }
  std::vector<int64_t> words = packLines(files);
  words.push_back(count);
  words.insert(words.end(), body.begin(), body.end());
  return words;
}

Result<std::vector<WorkOp>> unpackOps(const std::vector<int64_t>& words) {
  if (words.empty() || words[0] < 0 || static_cast<uint64_t>(words[0]) > (words.size() - 1) * 8) {
    return NS_ERROR(Code::kInternal, "packed operations: the file table's length is wrong");
  }
  const size_t tableWords = 1 + (static_cast<size_t>(words[0]) + 7) / 8;
  const std::vector<std::string> files =
      unpackLines(std::vector<int64_t>(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(tableWords)));
  std::vector<uint32_t> interned;
  for (const std::string& file : files) interned.push_back(internSourceFile(file));
  if (words.size() <= tableWords || words[tableWords] < 0 ||
      (words.size() - tableWords - 1) != static_cast<size_t>(words[tableWords]) * kWordsPerOp) {
    return NS_ERROR(Code::kInternal, "packed operations: {} words do not hold the op count they announce",
                    words.size());
  }
  std::vector<WorkOp> ops(static_cast<size_t>(words[tableWords]));
  const int64_t* w = words.data() + tableWords + 1;
  for (WorkOp& op : ops) {
    op.commId = static_cast<uint64_t>(w[0]);
    op.seq = static_cast<uint64_t>(w[1]);
    op.count = static_cast<uint64_t>(w[2]);
    op.type = static_cast<DataType>(w[3] & 0xff);
    op.reduce = static_cast<ReduceKind>((w[3] >> 8) & 0xff);
    op.kind = static_cast<OpKind>((w[3] >> 16) & 0xff);
    op.algo = static_cast<Algorithm>((w[3] >> 24) & 0xff);
    op.channels = static_cast<uint8_t>((w[3] >> 32) & 0xff);
    op.proto = static_cast<Protocol>((w[3] >> 40) & 0xff);
    op.origin = static_cast<OpOrigin>((w[3] >> 48) & 0xff);
    op.recordedClock = static_cast<RecordedClock>((w[3] >> 56) & 0xff);
    op.root = static_cast<int>(w[4]);
    op.peer = static_cast<int>(w[5]);
    op.bytes = static_cast<uint64_t>(w[6]);
    op.issueNs = w[7];
    op.computeNs = w[8];
    op.recordedNs = w[9];
    op.group = static_cast<int>(w[10]);
    if (w[11] >= 0) {
      if (static_cast<size_t>(w[11]) >= interned.size()) {
        return NS_ERROR(Code::kInternal, "packed operations: file {} of a table of {}", w[11], interned.size());
      }
      op.source = SourceLine(interned[static_cast<size_t>(w[11])], w[12]);
    }
    w += kWordsPerOp;
  }
  return ops;
}

}  // namespace nshim::phynet
