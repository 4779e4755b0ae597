// Element access as double for every data type (tests, scalars): integers truncate and saturate,
// low-precision floats round once to nearest even (through a round-to-odd float).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "collectives/reduce.h"

namespace nshim {
namespace {

// Rounds to float with round-to-odd, so that a second rounding to a format of at most 22 bits of
// precision gives the correctly rounded result of the double.
float doubleToFloatRoundOdd(double v) {
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isnan(f)) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) bits -= 1;  // truncate toward zero
  return std::bit_cast<float>(bits | 1u);
}

// double -> integer: truncates toward zero, saturates at the type's range, NaN gives 0.
template <class T>
T saturateCast(double v) {
  constexpr double kLimit = 2.0 * static_cast<double>(T(1) << (std::numeric_limits<T>::digits - 1));
  constexpr double kLow = std::is_signed_v<T> ? -kLimit : 0.0;
  if (std::isnan(v)) return 0;
  if (v >= kLimit) return std::numeric_limits<T>::max();
  if (v <= kLow) return std::numeric_limits<T>::min();
  return static_cast<T>(v);
}

}  // namespace

double loadAsDouble(DataType type, const void* buf, size_t index) {
  switch (type) {
    case DataType::kInt8: return static_cast<const int8_t*>(buf)[index];
    case DataType::kUint8: return static_cast<const uint8_t*>(buf)[index];
    case DataType::kInt32: return static_cast<const int32_t*>(buf)[index];
    case DataType::kUint32: return static_cast<const uint32_t*>(buf)[index];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[index]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[index]);
    case DataType::kFloat16: return halfToFloat(static_cast<const uint16_t*>(buf)[index]);
    case DataType::kFloat32: return static_cast<const float*>(buf)[index];
    case DataType::kFloat64: return static_cast<const double*>(buf)[index];
    case DataType::kBfloat16: return bfloat16ToFloat(static_cast<const uint16_t*>(buf)[index]);
    case DataType::kFp8E4M3: return fp8e4m3ToFloat(static_cast<const uint8_t*>(buf)[index]);
    case DataType::kFp8E5M2: return fp8e5m2ToFloat(static_cast<const uint8_t*>(buf)[index]);
  }
  return 0.0;
}

void storeFromDouble(DataType type, void* buf, size_t index, double value) {
  switch (type) {
    case DataType::kInt8: static_cast<int8_t*>(buf)[index] = saturateCast<int8_t>(value); return;
    case DataType::kUint8: static_cast<uint8_t*>(buf)[index] = saturateCast<uint8_t>(value); return;
    case DataType::kInt32: static_cast<int32_t*>(buf)[index] = saturateCast<int32_t>(value); return;
    case DataType::kUint32: static_cast<uint32_t*>(buf)[index] = saturateCast<uint32_t>(value); return;
    case DataType::kInt64: static_cast<int64_t*>(buf)[index] = saturateCast<int64_t>(value); return;
    case DataType::kUint64: static_cast<uint64_t*>(buf)[index] = saturateCast<uint64_t>(value); return;
    case DataType::kFloat16: static_cast<uint16_t*>(buf)[index] = floatToHalf(doubleToFloatRoundOdd(value)); return;
    case DataType::kFloat32: static_cast<float*>(buf)[index] = static_cast<float>(value); return;
    case DataType::kFloat64: static_cast<double*>(buf)[index] = value; return;
    case DataType::kBfloat16:
      static_cast<uint16_t*>(buf)[index] = floatToBfloat16(doubleToFloatRoundOdd(value));
      return;
    case DataType::kFp8E4M3: static_cast<uint8_t*>(buf)[index] = floatToFp8e4m3(doubleToFloatRoundOdd(value)); return;
    case DataType::kFp8E5M2: static_cast<uint8_t*>(buf)[index] = floatToFp8e5m2(doubleToFloatRoundOdd(value)); return;
  }
}

}  // namespace nshim
