// The --verify patterns (splitmix64 per 8-byte word, so any slice can be made directly), the
// expected result of each collective from the members' patterns, and the comparison.
#include "phynet/data_check.h"

#include <algorithm>
#include <cstring>

#include "model/datatype.h"

namespace nshim::phynet {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t seedOf(uint64_t kind, uint64_t index, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(kind ^ index) ^ a) ^ b);
}

// Eight uint8 additions modulo 256 in one word (no carry between bytes).
uint64_t addBytes(uint64_t a, uint64_t b) {
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  return ((a & ~kHigh) + (b & ~kHigh)) ^ ((a ^ b) & kHigh);
}

void addInto(uint8_t* acc, const uint8_t* add, size_t size) {
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t a, b;
    std::memcpy(&a, acc + i, 8);
    std::memcpy(&b, add + i, 8);
    a = addBytes(a, b);
    std::memcpy(acc + i, &a, 8);
  }
  for (; i < size; ++i) acc[i] = static_cast<uint8_t>(acc[i] + add[i]);
}

constexpr uint64_t kCollectiveKind = 0xC011EC7ull;
constexpr uint64_t kP2pKind = 0x9292ull;

}  // namespace

WorkOp checkedForm(const WorkOp& op) {
  WorkOp checked = op;
  if (describe(op.kind).pointToPoint) return checked;  // p2p moves op.bytes
  checked.count = op.count * dataTypeSize(op.type);
  checked.type = DataType::kUint8;
  if (describe(op.kind).reduces) checked.reduce = ReduceKind::kSum;
  return checked;
}

void fillPattern(uint64_t seed, size_t offset, uint8_t* out, size_t size) {
  size_t i = 0;
  while (i < size) {
    const size_t position = offset + i;
    const uint64_t word = splitmix64(seed + position / 8);
    const size_t skip = position % 8;
    const size_t take = std::min<size_t>(8 - skip, size - i);
    std::memcpy(out + i, reinterpret_cast<const uint8_t*>(&word) + skip, take);
    i += take;
  }
}

uint64_t DataCheck::collectiveSeed(int rank) const {
  return seedOf(kCollectiveKind, collectives_, static_cast<uint64_t>(rank), 0);
}

void DataCheck::fillCollective(const WorkOp& op, uint8_t* send) {
  const size_t unit = op.count;
  const size_t all = unit * static_cast<size_t>(nranks_);
  switch (op.kind) {
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll: fillPattern(collectiveSeed(rank_), 0, send, all); break;
    case OpKind::kBroadcast:
      if (rank_ == op.root) fillPattern(collectiveSeed(rank_), 0, send, unit);
      break;
    case OpKind::kScatter:
      if (rank_ == op.root) fillPattern(collectiveSeed(rank_), 0, send, all);
      break;
    default: fillPattern(collectiveSeed(rank_), 0, send, unit); break;  // allreduce, allgather, reduce, gather
  }
}

Status DataCheck::checkCollective(const WorkOp& op, const uint8_t* recv) {
  const size_t unit = op.count;
  const size_t mine = unit * static_cast<size_t>(rank_);  // this rank's block of a whole-communicator buffer
  Status status;
  switch (op.kind) {
    case OpKind::kAllReduce: status = compare(op, recv, unit, true, -1, 0, "result"); break;
    case OpKind::kReduceScatter: status = compare(op, recv, unit, true, -1, mine, "result"); break;
    case OpKind::kReduce:
      if (rank_ == op.root) status = compare(op, recv, unit, true, -1, 0, "result at the root");
      break;
    case OpKind::kBroadcast: status = compare(op, recv, unit, false, op.root, 0, "data from the root"); break;
    case OpKind::kScatter: status = compare(op, recv, unit, false, op.root, mine, "block from the root"); break;
    case OpKind::kAllGather:
    case OpKind::kGather:
    case OpKind::kAllToAll:
      if (op.kind == OpKind::kGather && rank_ != op.root) break;
      for (int q = 0; q < nranks_ && status.ok(); ++q) {
        const size_t from = op.kind == OpKind::kAllToAll ? mine : 0;
        status = compare(op, recv + unit * static_cast<size_t>(q), unit, false, q, from, "block of a member");
      }
      break;
    default: status = NS_ERROR(Code::kInternal, "{} is not a collective", opKindName(op.kind));
  }
  ++collectives_;
  return status;
}

void DataCheck::fillSend(int peer, uint8_t* buf, size_t bytes) {
  fillPattern(seedOf(kP2pKind, sentTo_[peer]++, static_cast<uint64_t>(rank_), static_cast<uint64_t>(peer)), 0, buf,
              bytes);
}

// Both checks build the expected bytes a window at a time, so that --verify needs no memory beyond
// the replay's own buffers (two windows), whatever the message size.
Status DataCheck::checkReceive(int peer, uint64_t index, const uint8_t* buf, size_t bytes) {
  const uint64_t seed = seedOf(kP2pKind, index, static_cast<uint64_t>(peer), static_cast<uint64_t>(rank_));
  bytesChecked_ += bytes;
  for (size_t at = 0; at < bytes; at += kCheckWindowBytes) {
    const size_t n = std::min(kCheckWindowBytes, bytes - at);
    expected_.resize(n);
    fillPattern(seed, at, expected_.data(), n);
    if (std::memcmp(buf + at, expected_.data(), n) == 0) continue;
    size_t i = 0;
    while (buf[at + i] == expected_[i]) ++i;
    return NS_ERROR(Code::kInternal, "data check: message {} from rank {}: byte {} of {} is {}, expected {}", index,
                    peer, at + i, bytes, buf[at + i], expected_[i]);
  }
  return Status::Ok();
}

Status DataCheck::compare(const WorkOp& op, const uint8_t* got, size_t size, bool sum, int source, size_t offset,
                          const char* what) {
  bytesChecked_ += size;
  for (size_t at = 0; at < size; at += kCheckWindowBytes) {
    const size_t n = std::min(kCheckWindowBytes, size - at);
    expected_.assign(n, 0);
    if (sum) {
      one_.resize(n);
      for (int r = 0; r < nranks_; ++r) {
        fillPattern(collectiveSeed(r), offset + at, one_.data(), n);
        addInto(expected_.data(), one_.data(), n);
      }
    } else {
      fillPattern(collectiveSeed(source), offset + at, expected_.data(), n);
    }
    if (std::memcmp(got + at, expected_.data(), n) == 0) continue;
    size_t i = 0;
    while (got[at + i] == expected_[i]) ++i;
    std::string from = sum ? "the sum over every member" : fmt::format("rank {}", source);
    return NS_ERROR(Code::kInternal, "data check: {} ({}): byte {} of {} is {}, expected {} ({} bytes, uint8 {})", what,
                    from, at + i, size, got[at + i], expected_[i], op.count, sum ? "sum" : "copy");
  }
  return Status::Ok();
}

}  // namespace nshim::phynet
