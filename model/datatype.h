// Data types and reduction operators of the engine. The numeric values equal NCCL's
// ncclDataType_t and ncclRedOp_t so the shim converts by value; the engine itself does not include
// nccl.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nshim {

enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFp8E4M3 = 10,
  kFp8E5M2 = 11,
};
constexpr int kNumDataTypes = 12;

enum class ReduceKind : uint8_t {
  kSum = 0,
  kProd = 1,
  kMax = 2,
  kMin = 3,
  kAvg = 4,        // sum, then divide by the number of ranks
  kPreMulSum = 5,  // each input multiplied by `scalar` before summing
};
constexpr int kNumReduceKinds = 6;

// A reduction as requested by the caller. For kPreMulSum the scalar is held both as a double (float
// types) and as an integer (integer types), converted from the caller's typed value.
struct ReduceOp {
  ReduceKind kind = ReduceKind::kSum;
  double floatScalar = 1.0;
  int64_t intScalar = 1;
};

size_t dataTypeSize(DataType type);
const char* dataTypeName(DataType type);
const char* reduceKindName(ReduceKind kind);
bool isValidDataType(int value);
bool isFloatType(DataType type);

}  // namespace nshim
