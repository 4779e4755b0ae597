// Sizes and printable names of the engine's data types and reduction kinds (NCCL's spellings, as
// nccl-tests prints them).
#include "model/datatype.h"

namespace nshim {

size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2: return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64: return 8;
  }
  return 0;
}

const char* dataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUint64: return "uint64";
    case DataType::kFloat16: return "half";
    case DataType::kFloat32: return "float";
    case DataType::kFloat64: return "double";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kFp8E4M3: return "f8e4m3";
    case DataType::kFp8E5M2: return "f8e5m2";
  }
  return "unknown";
}

const char* reduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kProd: return "prod";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kAvg: return "avg";
    case ReduceKind::kPreMulSum: return "premulsum";
  }
  return "unknown";
}

bool isValidDataType(int value) { return value >= 0 && value < kNumDataTypes; }

bool isFloatType(DataType type) {
  switch (type) {
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kBfloat16:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2: return true;
    default: return false;
  }
}

}  // namespace nshim
