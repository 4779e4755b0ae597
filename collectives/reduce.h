// Host reduction kernels for all 12 data types: elementwise combine, pre-multiply and divide.
// Low-precision floats (float16, bfloat16, fp8 e4m3/e5m2) are widened to float, combined and
// rounded back to nearest-even, once per combine, as NCCL does on the GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/datatype.h"

namespace nshim {

// inout[i] = inout[i] (op) in[i] for i < count. `kind` must be kSum, kProd, kMax or kMin
// (kAvg and kPreMulSum reduce with kSum; see baseReduceKind).
void reduceInto(DataType type, ReduceKind kind, void* inout, const void* in, size_t count);

// out[i] = a[i] (op) b[i]; out may alias a or b.
void reduceTo(DataType type, ReduceKind kind, void* out, const void* a, const void* b, size_t count);

// out[i] = in[i] * scalar (PreMulSum); out may alias in.
void scaleBy(DataType type, void* out, const void* in, size_t count, const ReduceOp& op);

// buf[i] = buf[i] / divisor (Avg); integer types use integer division like NCCL.
void divideBy(DataType type, void* buf, size_t count, int divisor);

// The elementwise combine used on the wire for a requested reduction.
inline ReduceKind baseReduceKind(ReduceKind kind) {
  return (kind == ReduceKind::kAvg || kind == ReduceKind::kPreMulSum) ? ReduceKind::kSum : kind;
}

// Conversions for the low-precision types (round to nearest even; NaN and infinities preserved
// where the format has them; e4m3 saturates to NaN like the OCP "fn" format).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);
float fp8e4m3ToFloat(uint8_t bits);
uint8_t floatToFp8e4m3(float value);
float fp8e5m2ToFloat(uint8_t bits);
uint8_t floatToFp8e5m2(float value);

// Read element i of a typed buffer as double / write a double into element i (for tests, scalars).
double loadAsDouble(DataType type, const void* buf, size_t index);
void storeFromDouble(DataType type, void* buf, size_t index, double value);

}  // namespace nshim
