// Host reduction kernels: elementwise sum/prod/max/min, PreMulSum scaling and Avg division for all
// 12 data types, plus the bit-exact conversions of the low-precision floats.
//
// Layout: a switch over the data type picks one per-type kernel function; inside it a switch over
// the reduction kind picks a template instantiation, so the per-element loops are plain
// restrict-pointer loops that the compiler vectorises (this file is built with -O3). float16,
// bfloat16 and fp8 are widened to float a block at a time, combined in float and rounded back to
// nearest-even, which gives correctly rounded sums and products (float has more than 2p+2 bits).
// On x86-64 the hot kernels are also compiled for AVX2 and chosen at load time (target_clones).
//
// Integer sums and products wrap modulo 2^bits (computed in the unsigned type). e4m3 is the OCP
// "fn" format: no infinities, finite values past 448 (after rounding) and infinities become NaN.
// e5m2 is IEEE-like: overflow gives infinity. max/min of a NaN follow the x86 maxps rule.
#include "collectives/reduce.h"

#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>

// ThreadSanitizer instruments the ifunc resolvers that target_clones adds, and they run before
// its runtime is up (a crash at load): TSan builds take the portable kernels.
#if defined(__x86_64__) && !defined(NSHIM_NO_TARGET_CLONES) && !defined(__SANITIZE_THREAD__)
#include <cpuid.h>
#include <immintrin.h>
#define NSHIM_X86_DISPATCH 1
#define NSHIM_HOT __attribute__((target_clones("avx2", "default")))
#else
#define NSHIM_X86_DISPATCH 0
#define NSHIM_HOT
#endif
#define NSHIM_INLINE inline __attribute__((always_inline))

namespace nshim {
namespace {

// ---- Conversions of the small float formats (sign, E exponent bits, M mantissa bits). ----------

template <int E, int M>
constexpr uint32_t kBias = (1u << (E - 1)) - 1;

// Both conversions compute every case on every lane and pick with masks, not `?:`: GCC will not
// if-convert a float operation that only one arm needs (it could trap), and a branch per element
// is several times slower than the vectorised block loop.

// Decodes exactly. kHasInf: the all-ones exponent holds inf/NaN (IEEE); otherwise only the
// all-ones pattern is NaN (OCP fn).
template <int E, int M, bool kHasInf>
constexpr float decodeMini(uint32_t bits) {
  constexpr uint32_t kMagMask = (1u << (E + M)) - 1;
  constexpr uint32_t kExpMask = ((1u << E) - 1) << M;
  const uint32_t em = bits & kMagMask;
  // Subnormals: em * 2^(1 - bias - M), exact in float.
  constexpr float kSubScale = std::bit_cast<float>((127 + 1 - kBias<E, M> - M) << 23);
  const uint32_t sub = std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * kSubScale);
  uint32_t normal = (em << (23 - M)) + ((127 - kBias<E, M>) << 23);
  if constexpr (kHasInf) {
    normal = em >= kExpMask ? normal + ((128 - (1u << (E - 1))) << 23) : normal;  // exponent 255
  } else {
    normal = em == kMagMask ? 0x7fc00000u : normal;
  }
  const uint32_t subMask = 0u - static_cast<uint32_t>(em < (1u << M));
  const uint32_t sign = ((bits >> (E + M)) & 1) << 31;
  return std::bit_cast<float>((sub & subMask) | (normal & ~subMask) | sign);
}

// Rounds to nearest even.
template <int E, int M, bool kHasInf>
constexpr uint32_t encodeMini(float value) {
  constexpr uint32_t kShift = 23 - M;
  constexpr uint32_t kMinNormal = (127 - kBias<E, M> + 1) << 23;  // as float bits
  // A float whose ulp is the smallest subnormal: adding it makes the FPU round |value| to a
  // subnormal of the format, nearest even.
  constexpr uint32_t kMagicBits = (127 + 24 - kBias<E, M> - M) << 23;
  constexpr float kMagic = std::bit_cast<float>(kMagicBits);
  constexpr uint32_t kRebias = (127 - kBias<E, M>) << 23;
  constexpr uint32_t kExpMask = ((1u << E) - 1) << M;
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t a = x & 0x7fffffffu;
  const uint32_t sub = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + kMagic) - kMagicBits;
  const uint32_t roundingBias = ((1u << (kShift - 1)) - 1) + ((a >> kShift) & 1);  // ties to even
  const uint32_t normal = (a - kRebias + roundingBias) >> kShift;
  const uint32_t subMask = 0u - static_cast<uint32_t>(a < kMinNormal);
  uint32_t r = (sub & subMask) | (normal & ~subMask);
  if constexpr (kHasInf) {
    r = std::min(r, kExpMask);  // overflow and inf; NaN (a > inf) adds the quiet bit and payload:
    const uint32_t nanMask = 0u - static_cast<uint32_t>(a > 0x7f800000u);
    r |= nanMask & ((1u << (M - 1)) | ((a >> kShift) & ((1u << M) - 1)));
  } else {
    r = std::min(r, (1u << (E + M)) - 1);  // past the largest finite value, inf and NaN: NaN
  }
  return r | ((x >> 31) << (E + M));
}

constexpr float decodeBf16(uint32_t bits) { return std::bit_cast<float>(bits << 16); }

constexpr uint32_t encodeBf16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return (x & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
}

template <int E, int M, bool kHasInf>
constexpr std::array<float, 256> makeFp8Table() {
  std::array<float, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) table[i] = decodeMini<E, M, kHasInf>(i);
  return table;
}
constexpr std::array<float, 256> kE4m3Table = makeFp8Table<4, 3, false>();
constexpr std::array<float, 256> kE5m2Table = makeFp8Table<5, 2, true>();

// Codecs of the types computed in float: per element, and per block (n <= kBlock) for the loops.
constexpr size_t kBlock = 512;

template <class Codec, class S>
struct CodecBase {
  using Storage = S;
  static NSHIM_INLINE void decodeN(float* __restrict dst, const S* __restrict src, size_t n) {
    for (size_t i = 0; i < n; ++i) dst[i] = Codec::decode(src[i]);
  }
  // fp8 encodes to 32-bit lanes first: GCC spills registers when one loop mixes 4:1 widths.
  static NSHIM_INLINE void encodeN(S* __restrict dst, const float* __restrict src, size_t n) {
    if constexpr (sizeof(S) == 1) {
      alignas(64) uint32_t wide[kBlock];
      for (size_t i = 0; i < n; ++i) wide[i] = Codec::encode(src[i]);
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<S>(wide[i]);
    } else {
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<S>(Codec::encode(src[i]));
    }
  }
};
struct HalfCodec : CodecBase<HalfCodec, uint16_t> {
  static NSHIM_INLINE float decode(uint16_t b) { return decodeMini<5, 10, true>(b); }
  static NSHIM_INLINE uint32_t encode(float v) { return encodeMini<5, 10, true>(v); }
};
struct Bf16Codec : CodecBase<Bf16Codec, uint16_t> {
  static NSHIM_INLINE float decode(uint16_t b) { return decodeBf16(b); }
  static NSHIM_INLINE uint32_t encode(float v) { return encodeBf16(v); }
};
struct E4m3Codec : CodecBase<E4m3Codec, uint8_t> {
  static NSHIM_INLINE float decode(uint8_t b) { return kE4m3Table[b]; }
  static NSHIM_INLINE uint32_t encode(float v) { return encodeMini<4, 3, false>(v); }
};
struct E5m2Codec : CodecBase<E5m2Codec, uint8_t> {
  static NSHIM_INLINE float decode(uint8_t b) { return kE5m2Table[b]; }
  static NSHIM_INLINE uint32_t encode(float v) { return encodeMini<5, 2, true>(v); }
};

#if NSHIM_X86_DISPATCH
// float16 with the F16C instructions (round to nearest even, like the code above; NaN payloads
// may differ). Used when the CPU has AVX2 and F16C: about 5x the portable code. Not inlined (a
// call per block): always_inline would have to pass through functions without the target.
#define NSHIM_F16C __attribute__((target("avx2,f16c")))
struct HalfF16cCodec : HalfCodec {
  static NSHIM_F16C void decodeN(float* __restrict dst, const uint16_t* __restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) dst[i] = decode(src[i]);
  }
  static NSHIM_F16C void encodeN(uint16_t* __restrict dst, const float* __restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
    for (; i < n; ++i) dst[i] = static_cast<uint16_t>(encode(src[i]));
  }
};

bool cpuHasF16c() {
  static const bool kHas = [] {
    __builtin_cpu_init();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0 && __builtin_cpu_supports("avx2");
  }();
  return kHas;
}
#endif

// ---- Elementwise loops. ------------------------------------------------------------------------

template <ReduceKind K, class T>
NSHIM_INLINE T combineOne(T a, T b) {
  if constexpr (K == ReduceKind::kSum) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(a) + U(b));
    } else {
      return a + b;
    }
  } else if constexpr (K == ReduceKind::kProd) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(a) * U(b));
    } else {
      return a * b;
    }
  } else if constexpr (K == ReduceKind::kMax) {
    return a < b ? b : a;
  } else {
    return b < a ? b : a;
  }
}

template <ReduceKind K, class T>
NSHIM_INLINE void combineLoop(T* __restrict out, const T* __restrict a, const T* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = combineOne<K>(a[i], b[i]);
}

// io = io (op) x, or io = x (op) io with kSwap (keeps the operand order of max/min with NaN).
template <ReduceKind K, bool kSwap, class T>
NSHIM_INLINE void combineInPlace(T* __restrict io, const T* __restrict x, size_t n) {
  for (size_t i = 0; i < n; ++i) { io[i] = kSwap ? combineOne<K>(x[i], io[i]) : combineOne<K>(io[i], x[i]); }
}

template <ReduceKind K, class T>
NSHIM_INLINE void combineSelf(T* io, size_t n) {
  for (size_t i = 0; i < n; ++i) io[i] = combineOne<K>(io[i], io[i]);
}

template <ReduceKind K, class T>
NSHIM_INLINE void combineAliased(T* out, const T* a, const T* b, size_t n) {
  if (a == b && out == a) {
    combineSelf<K>(out, n);
  } else if (out == a) {
    combineInPlace<K, false>(out, b, n);
  } else if (out == b) {
    combineInPlace<K, true>(out, a, n);
  } else {
    combineLoop<K>(out, a, b, n);
  }
}

template <class T, class S>
NSHIM_INLINE void scaleLoop(T* __restrict out, const T* __restrict in, S s, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = combineOne<ReduceKind::kProd>(in[i], s);
}

template <class T, class S>
NSHIM_INLINE void scaleInPlace(T* io, S s, size_t n) {
  for (size_t i = 0; i < n; ++i) io[i] = combineOne<ReduceKind::kProd>(io[i], s);
}

// Kernels of the types computed natively (integers, float, double).
template <class T>
struct NativeKernels {
  static NSHIM_INLINE void combine(ReduceKind kind, void* out, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    switch (kind) {
      case ReduceKind::kProd: return combineAliased<ReduceKind::kProd>(o, x, y, n);
      case ReduceKind::kMax: return combineAliased<ReduceKind::kMax>(o, x, y, n);
      case ReduceKind::kMin: return combineAliased<ReduceKind::kMin>(o, x, y, n);
      default: return combineAliased<ReduceKind::kSum>(o, x, y, n);
    }
  }
  static NSHIM_INLINE void scale(void* out, const void* in, size_t n, const ReduceOp& op) {
    T s;
    if constexpr (std::is_integral_v<T>) {
      s = T(std::make_unsigned_t<T>(uint64_t(op.intScalar)));  // wraps like the product does
    } else {
      s = static_cast<T>(op.floatScalar);
    }
    if (out == in) return scaleInPlace(static_cast<T*>(out), s, n);
    scaleLoop(static_cast<T*>(out), static_cast<const T*>(in), s, n);
  }
  static void divide(void* buf, size_t n, int divisor) {
    T* p = static_cast<T*>(buf);
    if constexpr (std::is_integral_v<T>) {
      // Narrow types divide as int; divisor > 0 so neither signed nor unsigned division overflows.
      using W = std::conditional_t<(sizeof(T) < sizeof(int)), int, T>;
      const W d = static_cast<W>(divisor);
      for (size_t i = 0; i < n; ++i) p[i] = T(W(p[i]) / d);
    } else {
      const T d = static_cast<T>(divisor);
      for (size_t i = 0; i < n; ++i) p[i] = p[i] / d;
    }
  }
};

// Kernels of the types computed in float, kBlock elements at a time through stack buffers.
template <class Codec>
struct BlockedKernels {
  using Storage = typename Codec::Storage;

  template <ReduceKind K>
  static NSHIM_INLINE void combineAs(Storage* out, const Storage* a, const Storage* b, size_t n) {
    alignas(64) float x[kBlock];
    alignas(64) float y[kBlock];
    for (size_t base = 0; base < n; base += kBlock) {
      const size_t m = std::min(kBlock, n - base);
      Codec::decodeN(x, a + base, m);
      Codec::decodeN(y, b + base, m);
      combineInPlace<K, false>(x, y, m);
      Codec::encodeN(out + base, x, m);  // after reading a and b: out may alias them
    }
  }
  static NSHIM_INLINE void combine(ReduceKind kind, void* out, const void* a, const void* b, size_t n) {
    Storage* o = static_cast<Storage*>(out);
    const Storage* x = static_cast<const Storage*>(a);
    const Storage* y = static_cast<const Storage*>(b);
    switch (kind) {
      case ReduceKind::kProd: return combineAs<ReduceKind::kProd>(o, x, y, n);
      case ReduceKind::kMax: return combineAs<ReduceKind::kMax>(o, x, y, n);
      case ReduceKind::kMin: return combineAs<ReduceKind::kMin>(o, x, y, n);
      default: return combineAs<ReduceKind::kSum>(o, x, y, n);
    }
  }
  // out = codec(in[i] (*or/) s), computed in float.
  template <bool kDivide>
  static NSHIM_INLINE void mapAs(Storage* out, const Storage* in, float s, size_t n) {
    alignas(64) float x[kBlock];
    for (size_t base = 0; base < n; base += kBlock) {
      const size_t m = std::min(kBlock, n - base);
      Codec::decodeN(x, in + base, m);
      for (size_t i = 0; i < m; ++i) x[i] = kDivide ? x[i] / s : x[i] * s;
      Codec::encodeN(out + base, x, m);
    }
  }
  static NSHIM_INLINE void scale(void* out, const void* in, size_t n, const ReduceOp& op) {
    mapAs<false>(static_cast<Storage*>(out), static_cast<const Storage*>(in), static_cast<float>(op.floatScalar), n);
  }
  static void divide(void* buf, size_t n, int divisor) {
    mapAs<true>(static_cast<Storage*>(buf), static_cast<const Storage*>(buf), static_cast<float>(divisor), n);
  }
};

// One non-template function per type so that target_clones applies (it does not take templates).
#define NSHIM_DEFINE_KERNELS(Name, Kernels)                                                          \
  NSHIM_HOT void combine##Name(ReduceKind kind, void* out, const void* a, const void* b, size_t n) { \
    Kernels::combine(kind, out, a, b, n);                                                            \
  }                                                                                                  \
  NSHIM_HOT void scale##Name(void* out, const void* in, size_t n, const ReduceOp& op) {              \
    Kernels::scale(out, in, n, op);                                                                  \
  }

NSHIM_DEFINE_KERNELS(Int8, NativeKernels<int8_t>)
NSHIM_DEFINE_KERNELS(Uint8, NativeKernels<uint8_t>)
NSHIM_DEFINE_KERNELS(Int32, NativeKernels<int32_t>)
NSHIM_DEFINE_KERNELS(Uint32, NativeKernels<uint32_t>)
NSHIM_DEFINE_KERNELS(Int64, NativeKernels<int64_t>)
NSHIM_DEFINE_KERNELS(Uint64, NativeKernels<uint64_t>)
NSHIM_DEFINE_KERNELS(Float16, BlockedKernels<HalfCodec>)
NSHIM_DEFINE_KERNELS(Float32, NativeKernels<float>)
NSHIM_DEFINE_KERNELS(Float64, NativeKernels<double>)
NSHIM_DEFINE_KERNELS(Bfloat16, BlockedKernels<Bf16Codec>)
NSHIM_DEFINE_KERNELS(Fp8E4M3, BlockedKernels<E4m3Codec>)
NSHIM_DEFINE_KERNELS(Fp8E5M2, BlockedKernels<E5m2Codec>)
#if NSHIM_X86_DISPATCH
NSHIM_F16C void combineFloat16F16c(ReduceKind kind, void* out, const void* a, const void* b, size_t n) {
  BlockedKernels<HalfF16cCodec>::combine(kind, out, a, b, n);
}
NSHIM_F16C void scaleFloat16F16c(void* out, const void* in, size_t n, const ReduceOp& op) {
  BlockedKernels<HalfF16cCodec>::scale(out, in, n, op);
}
#endif
#undef NSHIM_DEFINE_KERNELS

}  // namespace

void reduceTo(DataType type, ReduceKind kind, void* out, const void* a, const void* b, size_t count) {
  kind = baseReduceKind(kind);
  switch (type) {
    case DataType::kInt8: return combineInt8(kind, out, a, b, count);
    case DataType::kUint8: return combineUint8(kind, out, a, b, count);
    case DataType::kInt32: return combineInt32(kind, out, a, b, count);
    case DataType::kUint32: return combineUint32(kind, out, a, b, count);
    case DataType::kInt64: return combineInt64(kind, out, a, b, count);
    case DataType::kUint64: return combineUint64(kind, out, a, b, count);
    case DataType::kFloat16:
#if NSHIM_X86_DISPATCH
      if (cpuHasF16c()) return combineFloat16F16c(kind, out, a, b, count);
#endif
      return combineFloat16(kind, out, a, b, count);
    case DataType::kFloat32: return combineFloat32(kind, out, a, b, count);
    case DataType::kFloat64: return combineFloat64(kind, out, a, b, count);
    case DataType::kBfloat16: return combineBfloat16(kind, out, a, b, count);
    case DataType::kFp8E4M3: return combineFp8E4M3(kind, out, a, b, count);
    case DataType::kFp8E5M2: return combineFp8E5M2(kind, out, a, b, count);
  }
}

void reduceInto(DataType type, ReduceKind kind, void* inout, const void* in, size_t count) {
  reduceTo(type, kind, inout, inout, in, count);
}

void scaleBy(DataType type, void* out, const void* in, size_t count, const ReduceOp& op) {
  switch (type) {
    case DataType::kInt8: return scaleInt8(out, in, count, op);
    case DataType::kUint8: return scaleUint8(out, in, count, op);
    case DataType::kInt32: return scaleInt32(out, in, count, op);
    case DataType::kUint32: return scaleUint32(out, in, count, op);
    case DataType::kInt64: return scaleInt64(out, in, count, op);
    case DataType::kUint64: return scaleUint64(out, in, count, op);
    case DataType::kFloat16:
#if NSHIM_X86_DISPATCH
      if (cpuHasF16c()) return scaleFloat16F16c(out, in, count, op);
#endif
      return scaleFloat16(out, in, count, op);
    case DataType::kFloat32: return scaleFloat32(out, in, count, op);
    case DataType::kFloat64: return scaleFloat64(out, in, count, op);
    case DataType::kBfloat16: return scaleBfloat16(out, in, count, op);
    case DataType::kFp8E4M3: return scaleFp8E4M3(out, in, count, op);
    case DataType::kFp8E5M2: return scaleFp8E5M2(out, in, count, op);
  }
}

void divideBy(DataType type, void* buf, size_t count, int divisor) {
  if (divisor <= 1) return;  // precondition divisor >= 1; dividing by 1 changes nothing
  switch (type) {
    case DataType::kInt8: return NativeKernels<int8_t>::divide(buf, count, divisor);
    case DataType::kUint8: return NativeKernels<uint8_t>::divide(buf, count, divisor);
    case DataType::kInt32: return NativeKernels<int32_t>::divide(buf, count, divisor);
    case DataType::kUint32: return NativeKernels<uint32_t>::divide(buf, count, divisor);
    case DataType::kInt64: return NativeKernels<int64_t>::divide(buf, count, divisor);
    case DataType::kUint64: return NativeKernels<uint64_t>::divide(buf, count, divisor);
    case DataType::kFloat16: return BlockedKernels<HalfCodec>::divide(buf, count, divisor);
    case DataType::kFloat32: return NativeKernels<float>::divide(buf, count, divisor);
    case DataType::kFloat64: return NativeKernels<double>::divide(buf, count, divisor);
    case DataType::kBfloat16: return BlockedKernels<Bf16Codec>::divide(buf, count, divisor);
    case DataType::kFp8E4M3: return BlockedKernels<E4m3Codec>::divide(buf, count, divisor);
    case DataType::kFp8E5M2: return BlockedKernels<E5m2Codec>::divide(buf, count, divisor);
  }
}

float halfToFloat(uint16_t bits) { return HalfCodec::decode(bits); }
uint16_t floatToHalf(float value) { return static_cast<uint16_t>(HalfCodec::encode(value)); }
float bfloat16ToFloat(uint16_t bits) { return Bf16Codec::decode(bits); }
uint16_t floatToBfloat16(float value) { return static_cast<uint16_t>(Bf16Codec::encode(value)); }
float fp8e4m3ToFloat(uint8_t bits) { return E4m3Codec::decode(bits); }
uint8_t floatToFp8e4m3(float value) { return static_cast<uint8_t>(E4m3Codec::encode(value)); }
float fp8e5m2ToFloat(uint8_t bits) { return E5m2Codec::decode(bits); }
uint8_t floatToFp8e5m2(float value) { return static_cast<uint8_t>(E5m2Codec::encode(value)); }

}  // namespace nshim
