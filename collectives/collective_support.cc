// Validation and the small data helpers shared by all collective algorithms.
#include "collectives/collective_support.h"

#include <algorithm>
#include <cstring>

#include "collectives/collectives.h"
#include "collectives/reduce.h"
#include "model/double_binary_tree.h"

namespace nshim {

CallProtocol::CallProtocol(Communicator& comm, Protocol protocol)
    : transport_(protocol == Protocol::kAuto ? nullptr : &comm.transport()) {
  if (transport_ != nullptr) transport_->setProtocol(protocol);
}

CallProtocol::~CallProtocol() {
  if (transport_ != nullptr) transport_->setProtocol(Protocol::kSimple);
}

Status validateCollective(const Communicator& comm, const char* opName, const void* send, const void* recv,
                          size_t count, DataType type, const ReduceOp* op, int root, BufferUse use) {
  if (!isValidDataType(static_cast<int>(type))) {
    return NS_ERROR(Code::kInvalidArgument, "{}: invalid datatype {}", opName, static_cast<int>(type));
  }
  if (op != nullptr && static_cast<int>(op->kind) >= kNumReduceKinds) {
    return NS_ERROR(Code::kInvalidArgument, "{}: invalid reduction op {}", opName, static_cast<int>(op->kind));
  }
  if (count > (size_t{1} << 56) / std::max<size_t>(1, static_cast<size_t>(comm.nranks()))) {
    return NS_ERROR(Code::kInvalidArgument, "{}: count {} is too large", opName, count);
  }
  if (root != -1 && (root < 0 || root >= comm.nranks())) {
    return NS_ERROR(Code::kInvalidArgument, "{}: root {} out of range [0, {})", opName, root, comm.nranks());
  }
  if (count > 0 && use.send && send == nullptr) {
    return NS_ERROR(Code::kInvalidArgument, "{}: sendbuff is NULL", opName);
  }
  if (count > 0 && use.recv && recv == nullptr) {
    return NS_ERROR(Code::kInvalidArgument, "{}: recvbuff is NULL", opName);
  }
  return Status::Ok();
}

int ringWindow(const Communicator& comm) { return std::max(1, comm.options().maxInflight); }

size_t reductionScratchBound(const CollectiveOptions& options) {
  constexpr size_t kLargestElement = 8;  // slices and chunks are whole elements: at least one
  const size_t window = static_cast<size_t>(std::max(1, options.maxInflight));
  const size_t ringStages = window * 2 * std::max(options.sliceBytes, kLargestElement);
  const size_t chainStages = window * std::max(options.chunkBytes, kLargestElement);
  const size_t treeStages = chainStages * kMaxTreeDown;
  return std::max({ringStages, treeStages, options.smallAllReduceBytes});
}

size_t reductionScratchFor(const CollectiveOptions& options, size_t bufferBytes) {
  constexpr size_t kLargestElement = 8;
  const size_t window = static_cast<size_t>(std::max(1, options.maxInflight));
  const size_t stages = window * std::max<size_t>(2, kMaxTreeDown);  // ring: 2 per window slot; tree: children
  const size_t bytes = std::max(bufferBytes, kLargestElement);
  const size_t bound = reductionScratchBound(options);
  return bytes > bound / stages ? bound : stages * bytes;
}

const void* preScaledInput(const void* send, size_t count, DataType type, const ReduceOp& op,
                           std::vector<char>* storage) {
  if (op.kind != ReduceKind::kPreMulSum || count == 0) return send;
  storage->resize(count * dataTypeSize(type));
  scaleBy(type, storage->data(), send, count, op);
  return storage->data();
}

void finishAverage(void* buf, size_t count, DataType type, const ReduceOp& op, int nranks) {
  if (op.kind == ReduceKind::kAvg && count > 0) divideBy(type, buf, count, nranks);
}

namespace {
// The call's protocol (kAuto: the options', else Simple) is NCCL's Simple.
bool runsSimple(const Communicator& comm, Protocol protocol) {
  if (protocol == Protocol::kAuto) protocol = comm.options().protocol;
  return protocol == Protocol::kAuto || protocol == Protocol::kSimple;
}
}  // namespace

std::vector<RingSlice> ringSlicesFor(const Communicator& comm, DataType type, size_t perRank, int channels,
                                     Protocol protocol) {
  if (runsSimple(comm, protocol)) {
    return ncclSimpleRingSlices(perRank, dataTypeSize(type), channels, comm.options().sliceBytes);
  }
  std::vector<RingSlice> slices;
  const size_t sliceElems = ringSliceElements(comm, type, perRank);
  for (size_t begin = 0; begin < perRank; begin += sliceElems) {
    slices.push_back({begin, std::min(sliceElems, perRank - begin),
                      static_cast<int>(slices.size() % static_cast<size_t>(std::max(1, channels)))});
  }
  return slices;
}

std::vector<RingLoopSlice> ringAllReduceSlicesFor(const Communicator& comm, DataType type, size_t count, int channels,
                                                  Protocol protocol) {
  const int n = comm.nranks();
  if (runsSimple(comm, protocol)) {
    return ncclSimpleAllReduceSlices(count, dataTypeSize(type), n, channels, comm.options().sliceBytes);
  }
  std::vector<RingLoopSlice> blocks;
  const size_t blockElems = ringAllReduceSliceElements(comm, type, count, channels) * static_cast<size_t>(n);
  for (size_t base = 0; base < count; base += blockElems) {
    const size_t elems = std::min(blockElems, count - base);
    const size_t stride = (elems + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    blocks.push_back({base, stride, 0, stride, base + elems,
                      static_cast<int>(blocks.size() % static_cast<size_t>(std::max(1, channels)))});
  }
  return blocks;
}

void reduceArrived(const Communicator& comm, DataType type, ReduceKind kind, void* out, const void* a, const void* b,
                   size_t count) {
  if (comm.options().doGpuWork) reduceTo(type, kind, out, a, b, count);
}

void finishReduction(const Communicator& comm, void* buf, size_t count, DataType type, const ReduceOp& op, int nranks) {
  if (comm.options().doGpuWork) finishAverage(buf, count, type, op, nranks);
}

void copyOwnBlock(const Communicator& comm, void* dst, const void* src, size_t count, DataType type) {
  if (comm.options().doGpuWork) copyElements(dst, src, count, type);
}

void copyElements(void* dst, const void* src, size_t count, DataType type) {
  if (dst != src && count > 0) std::memmove(dst, src, count * dataTypeSize(type));
}

}  // namespace nshim
