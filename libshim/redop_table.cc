// PreMulSum operator handles: creation, destruction and resolution into an engine ReduceOp.
#include "libshim/redop_table.h"

#include <cmath>

#include "collectives/reduce.h"

namespace nshim {

int RedOpTable::create(const PreMulSumOp& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < live_.size(); ++i) {
    if (!live_[i]) {
      ops_[i] = op;
      live_[i] = true;
      return kNumBuiltinOps + static_cast<int>(i);
    }
  }
  ops_.push_back(op);
  live_.push_back(true);
  return kNumBuiltinOps + static_cast<int>(ops_.size() - 1);
}

Status RedOpTable::destroy(int handle, const char* fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (handle < kNumBuiltinOps) {
    return NS_ERROR(Code::kInvalidArgument, "{}: op {} is a built-in operator and cannot be destroyed", fn, handle);
  }
  size_t index = static_cast<size_t>(handle - kNumBuiltinOps);
  if (index >= live_.size() || !live_[index]) {
    return NS_ERROR(Code::kInvalidArgument, "{}: op {} is not a live PreMulSum operator of this communicator", fn,
                    handle);
  }
  live_[index] = false;
  return Status::Ok();
}

Result<ReduceOp> RedOpTable::resolve(int handle, DataType type, const char* fn) const {
  if (handle >= 0 && handle < kNumBuiltinOps) {
    ReduceOp op;
    op.kind = static_cast<ReduceKind>(handle);
    return op;
  }
  PreMulSumOp premul;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t index = static_cast<size_t>(handle) - kNumBuiltinOps;
    if (handle < 0 || index >= live_.size() || !live_[index]) {
      return NS_ERROR(Code::kInvalidArgument,
                      "{}: invalid op {} (not a built-in operator 0..{} nor a live ncclRedOpCreatePreMulSum handle "
                      "of this communicator)",
                      fn, handle, kNumBuiltinOps - 1);
    }
    premul = ops_[index];
  }
  if (premul.type != type) {
    return NS_ERROR(Code::kInvalidArgument, "{}: op {} was created for datatype {} but is used with datatype {}", fn,
                    handle, dataTypeName(premul.type), dataTypeName(type));
  }
  ReduceOp op;
  op.kind = ReduceKind::kPreMulSum;
  op.floatScalar = premul.byAddress ? loadAsDouble(type, premul.scalarAddress, 0) : premul.value;
  op.intScalar = static_cast<int64_t>(std::llround(op.floatScalar));
  return op;
}

}  // namespace nshim
