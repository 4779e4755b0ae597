// The PreMulSum reduction operators created on one communicator (ncclRedOpCreatePreMulSum): each
// gets a handle value after NCCL's built-in operators, is bound to one data type, and holds its
// scalar either by value (host immediate) or by address (read when an operation is issued).
#pragma once

#include <mutex>
#include <vector>

#include "common/status.h"
#include "model/datatype.h"

namespace nshim {

inline constexpr int kNumBuiltinOps = 5;  // ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg

struct PreMulSumOp {
  DataType type = DataType::kFloat32;
  bool byAddress = false;  // ncclScalarDevice: read *scalarAddress at issue time
  const void* scalarAddress = nullptr;
  double value = 0;  // ncclScalarHostImmediate: read at creation
};

class RedOpTable {
 public:
  // Returns the new handle (>= kNumBuiltinOps).
  int create(const PreMulSumOp& op);
  Status destroy(int handle, const char* fn);
  // The engine reduction for a handle (built-in or PreMulSum) used with `type`; an error names the
  // argument when the handle is unknown, destroyed, or bound to another type.
  Result<ReduceOp> resolve(int handle, DataType type, const char* fn) const;

 private:
  mutable std::mutex mutex_;
  std::vector<PreMulSumOp> ops_;
  std::vector<bool> live_;
};

}  // namespace nshim
